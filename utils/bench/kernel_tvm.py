"""Times one function of a relax module in TVM, for `bench.py --tvm-python`.

usage: TVM_PYTHON utils/bench/kernel_tvm.py MODULE.rlx ENTRY REPEAT OUT_DIR IN.npy [IN.npy ...]

Parses the module text with `tvm.script.from_source` (the same file relax-run runs),
builds it with TVM's default CPU pipeline (`tvm.compile(mod, "llvm")`: legalization,
fusion, memory planning, no tuning), runs ENTRY once to warm up and then REPEAT times in
`relax.VirtualMachine`, and prints `{"median_s": ...}` as JSON; the first result is
saved as OUT_DIR/out0.npy (tuples flattened) so that bench.py checks it against numpy.
"""
import json
import os
import sys
import time

import numpy as np
import tvm
from tvm import relax


def flatten(v):
    if isinstance(v, (list, tuple)) or type(v).__name__ in ("Array", "Tuple"):
        return [x for item in v for x in flatten(item)]
    return [v]


def main():
    module, entry, repeat, out_dir, *inputs = sys.argv[1:]
    mod = tvm.script.from_source(open(module).read())
    ex = tvm.compile(mod, target="llvm") if hasattr(tvm, "compile") else relax.build(mod, target="llvm")
    dev = tvm.cpu()
    vm = relax.VirtualMachine(ex, dev)
    to_dev = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    args = [to_dev(np.load(p), dev) for p in inputs]
    fn = vm[entry]
    result = fn(*args)
    times = []
    for _ in range(int(repeat)):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    times.sort()
    os.makedirs(out_dir, exist_ok=True)
    for i, r in enumerate(flatten(result)):
        np.save(os.path.join(out_dir, f"out{i}.npy"), r.numpy())
    print(json.dumps({"median_s": times[len(times) // 2], "version": tvm.__version__}))


if __name__ == "__main__":
    main()
