"""Random-pipeline robustness check of the fusion and memory passes.

usage: python3 pass_pipelines.py [--relax-opt PATH] [--iters N] [--seed S] FILE_OR_DIR ...

Takes the modules of the given files (chunks separated by `# -----` lines; folders are
searched for `*.rlx`), and N times (default 500): picks one, mutates it a little or not
at all (lines deleted, duplicated or swapped; numbers, dims, dtypes and identifiers
replaced by others, among them `0`, `-1`, huge values, symbolic names), and runs
`relax-opt` with a random pipeline of the fusion and memory passes (legalize-ops,
annotate-tir-op-pattern, fold-constant, fuse-ops with options, fuse-tir,
rewrite-dataflow-reshape, to-non-dataflow, remove-purity-checking, call-tir-rewrite,
plan-memory, lower-alloc-tensor, kill-after-last-use, the zero pipeline, the memory
report, remarks). It checks that relax-opt

* exits with 0 or 1 within 20 seconds, never panics (`panicked` on standard error, exit
  status 101) nor crashes;
* on exit status 1 prints at least one diagnostic `FILE:LINE:COL: error: ...` (or
  `error: FILE: ...`);
* on exit status 0 prints a module that relax-opt reads back.

Failures are written to `pass-pipeline-failures/` (the input and the command) and
summed up; exit status 1 when there is any. No TVM is needed.
"""
import os
import random
import re
import subprocess
import sys

PASSES = [
    ["--legalize-ops"],
    ["--annotate-tir-op-pattern"],
    ["--fold-constant"],
    ["--fuse-ops"],
    ["--pass-pipeline=fuse-ops{max-depth=2}"],
    ["--pass-pipeline=fuse-ops{opt-level=0}"],
    ["--fuse-tir"],
    ["--rewrite-dataflow-reshape"],
    ["--to-non-dataflow"],
    ["--remove-purity-checking"],
    ["--call-tir-rewrite"],
    ["--plan-memory"],
    ["--pass-pipeline=plan-memory{check-only=true}"],
    ["--lower-alloc-tensor"],
    ["--kill-after-last-use"],
    ["--zero"],
]
TAILS = [[], ["--memory-report"], ["--remarks=fuse-ops"], ["--memory-report", "--remarks=all"]]
NUMBERS = ["0", "1", "-1", "2", "3", "7", "64", "1024", "4294967296", "-9223372036854775808", "n", "m", "n + 1"]
DTYPES = ["float32", "float16", "int32", "bool", "int8", "float64", "uint8", "bfloat16"]


def chunks(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    return [c for c in re.split(r"(?m)^# -----.*\n", text) if "def " in c]


def mutate(text, rng):
    lines = text.split("\n")
    for _ in range(rng.randint(0, 3)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        op = rng.randrange(7)
        if op == 0 and len(lines) > 1:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:
            nums = list(re.finditer(r"\b\d+\b", lines[i]))
            if nums:
                m = rng.choice(nums)
                lines[i] = lines[i][: m.start()] + rng.choice(NUMBERS) + lines[i][m.end():]
        elif op == 4:
            dts = list(re.finditer(r'"(float|int|uint|bool|bfloat)\d*"', lines[i]))
            if dts:
                m = rng.choice(dts)
                lines[i] = lines[i][: m.start()] + f'"{rng.choice(DTYPES)}"' + lines[i][m.end():]
        elif op == 5:
            ids = list(re.finditer(r"\b[a-z_][a-z0-9_]*\b", lines[i]))
            others = re.findall(r"\b[a-z_][a-z0-9_]*\b", text)
            if ids and others:
                m = rng.choice(ids)
                lines[i] = lines[i][: m.start()] + rng.choice(others) + lines[i][m.end():]
        else:
            # A shape dim replaced: a constant by a symbolic one or the other way.
            m = re.search(r"\(\(([^()]*)\)", lines[i])
            if m:
                dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
                if dims:
                    k = rng.randrange(len(dims))
                    dims[k] = rng.choice(['"n"', "n", "1", "0", "m * n", "16"])
                    lines[i] = lines[i][: m.start(1)] + ", ".join(dims) + lines[i][m.end(1):]
    return "\n".join(lines)


def main(argv):
    relax_opt = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "debug", "relax-opt")
    iters, seed, inputs = 500, 0, []
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt = next(it)
        elif a == "--iters":
            iters = int(next(it))
        elif a == "--seed":
            seed = int(next(it))
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            inputs.append(a)
    files = []
    for p in inputs:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                if "/Output" in root:
                    continue
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".rlx")]
        else:
            files.append(p)
    modules = [c for f in files for c in chunks(f) if len(c) < 40000]
    if not modules:
        print(__doc__)
        return 2
    rng = random.Random(seed)
    out_dir = "pass-pipeline-failures"
    failures = 0
    statuses = {0: 0, 1: 0}
    for i in range(iters):
        text = modules[rng.randrange(len(modules))]
        if rng.random() < 0.6:
            text = mutate(text, rng)
        flags = [f for _ in range(rng.randint(1, 6)) for f in rng.choice(PASSES)] + rng.choice(TAILS)
        try:
            r = subprocess.run([relax_opt, "-", *flags], input=text, capture_output=True, text=True, timeout=20)
            code, err, out = r.returncode, r.stderr, r.stdout
        except subprocess.TimeoutExpired:
            code, err, out = "timeout", "", ""
        why = None
        if code not in (0, 1):
            why = f"exit status {code}"
        elif "panicked" in err:
            why = "panic"
        elif code == 1 and not re.search(r"(?m)^(<stdin>:\d+:\d+: error: |error: )", err):
            why = "exit status 1 without an error diagnostic"
        elif code == 0 and "--split-input-file" not in flags:
            back = subprocess.run([relax_opt, "-"], input=out, capture_output=True, text=True, timeout=20)
            if back.returncode != 0:
                why = "output does not read back: " + (back.stderr.strip().splitlines() or [""])[0]
        if why:
            failures += 1
            os.makedirs(out_dir, exist_ok=True)
            with open(os.path.join(out_dir, f"failure_{i}.rlx"), "w", encoding="utf-8") as f:
                f.write(f"# relax-opt - {' '.join(flags)}\n# {why}\n" + text)
            print(f"#{i}: {why}: relax-opt {' '.join(flags)}")
            for line in err.strip().splitlines()[:6]:
                print("    " + line)
        else:
            statuses[code] += 1
    print(f"{iters} runs: {statuses[0]} succeeded, {statuses[1]} rejected with diagnostics, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
