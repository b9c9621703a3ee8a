"""Input modules of TVM's own pass tests, for the fusion and memory differential checks.

usage: python harvest_tvm_tests.py OUT_DIR TEST_FILE.py [TEST_FILE.py ...]

Runs every `test_*` function of the given TVM test files (from a TVM source checkout:
`git -C /work/.mirror/apache+tvm/repo show HEAD:tests/python/relax/test_transform_fuse_ops.py`)
with a pass instrument that records the module given to the passes under study, and
writes what it saw, per pass, to OUT_DIR/<Pass>.rlx: the modules' TVM 0.25 text
separated by `# -----` lines, duplicates removed, each preceded by a comment naming the
test. Those files are inputs for `fusion_diff.py` / `run_diff.py` (FuseOps, FuseTIR,
FoldConstant inputs) and `memory_diff.py` (StaticPlanBlockMemory, CallTIRRewrite
inputs). A test that fails (pytest is not needed for most; parametrized tests run with
their first parameter set) is skipped; the recorded modules up to its failure are kept.

Run it with TVM 0.25's Python (`~/.cache/relax-peers/tvm025/bin/python`); the test files
import `tvm.testing`, which needs pytest on the path (`pip install --target DIR pytest`,
then `PYTHONPATH=DIR`).
"""
import importlib.util
import inspect
import os
import sys
import traceback

import tvm
from tvm.ir.instrument import pass_instrument

PASSES = {
    "FuseOps",
    "FuseTIR",
    "FoldConstant",
    "StaticPlanBlockMemory",
    "CallTIRRewrite",
    "LowerAllocTensor",
    "KillAfterLastUse",
    "RewriteDataflowReshape",
}

RECORDED = {}  # pass name -> list of (test, text)
CURRENT = ["?"]


@pass_instrument
class Recorder:
    def run_before_pass(self, mod, info):
        name = info.name
        if name not in PASSES:
            return
        try:
            text = mod.script(show_meta=False)
        except Exception:  # noqa: BLE001 - a module TVM cannot print is not recorded
            return
        RECORDED.setdefault(name, []).append((CURRENT[0], text))


_orig_init = tvm.transform.PassContext.__init__


def _init(self, *args, **kwargs):
    instruments = list(kwargs.pop("instruments", None) or [])
    if not any(isinstance(i, Recorder) for i in instruments):
        instruments.append(Recorder())
    kwargs["instruments"] = instruments
    _orig_init(self, *args, **kwargs)


def run_test(fn):
    sig = inspect.signature(fn)
    marks = getattr(fn, "pytestmark", [])
    kwargs = {}
    for m in marks:
        if getattr(m, "name", "") == "parametrize" and m.args:
            names = [n.strip() for n in m.args[0].split(",")]
            values = m.args[1][0]
            if len(names) == 1:
                values = (values,)
            kwargs.update(dict(zip(names, values)))
    for p in sig.parameters:
        if p not in kwargs:
            return False  # a fixture this harness does not provide
    fn(**kwargs)
    return True


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    tvm.transform.PassContext.__init__ = _init
    ran = failed = 0
    for path in argv[1:]:
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # TVMScript looks the test module up by name
        try:
            spec.loader.exec_module(module)
        except Exception:  # noqa: BLE001
            print(f"{path}: cannot import:\n{traceback.format_exc(limit=2)}", file=sys.stderr)
            continue
        for name, fn in sorted(vars(module).items()):
            if not name.startswith("test_") or not callable(fn):
                continue
            CURRENT[0] = f"{os.path.basename(path)}::{name}"
            try:
                with tvm.transform.PassContext():
                    if run_test(fn):
                        ran += 1
            except BaseException:  # noqa: BLE001 - expected failures (pytest.raises) included
                failed += 1
    total = 0
    for pass_name, items in sorted(RECORDED.items()):
        seen = set()
        parts = []
        for test, text in items:
            if text in seen or "metadata[" in text:
                continue
            seen.add(text)
            parts.append(f"# from {test}\n{text}")
        total += len(parts)
        with open(os.path.join(out, f"{pass_name}.rlx"), "w", encoding="utf-8") as f:
            f.write("\n# -----\n".join(parts))
        print(f"{pass_name}: {len(parts)} modules")
    print(f"{ran} tests ran, {failed} failed or skipped; {total} modules written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
