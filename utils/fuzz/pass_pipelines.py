"""Random-pipeline robustness check of the fusion and memory passes.

usage: python3 pass_pipelines.py [--relax-opt PATH] [--iters N] [--seed S] [--backends] FILE_OR_DIR ...

Takes the modules of the given files (chunks separated by `# -----` lines; folders are
searched for `*.rlx`), and N times (default 500): picks one, mutates it a little or not
at all (lines deleted, duplicated or swapped; numbers, dims, dtypes and identifiers
replaced by others, among them `0`, `-1`, huge values, symbolic names), and runs
`relax-opt` with a random pipeline of the fusion and memory passes (legalize-ops,
annotate-tir-op-pattern, fold-constant, fuse-ops with options, fuse-tir,
rewrite-dataflow-reshape, to-non-dataflow, remove-purity-checking, call-tir-rewrite,
plan-memory, lower-alloc-tensor, kill-after-last-use, the zero pipeline, schedule-cpu,
schedule-gpu, the memory report, remarks). The mutations also give op attributes odd
values (negative, huge, lists of the wrong length, wrong types), drop or duplicate op
arguments, nest calls deeply, give tensors zero, huge or symbolic shapes, and add block
annotations naming buffers that do not exist. With `--backends`, half of the pipeline
outputs under 20 kB go on through `relax-translate --emit=llvm|spirv|ptx` or `relax-run`
(interpreter or `--engine jit`, seeded inputs), which are held to the same rules. It
checks that relax-opt

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
    ["--schedule-cpu"],
    ["--pass-pipeline=schedule-cpu{vector-bits=8}"],
    ["--pass-pipeline=schedule-cpu{vector-bits=4096}"],
    ["--schedule-gpu"],
    ["--pass-pipeline=schedule-gpu{max-threads=1}"],
    ["--pass-pipeline=schedule-gpu{max-threads=1024}"],
]
# The back ends, run on the pipeline's output of small modules (`--backends`).
BACKENDS = [
    ["relax-translate", "--emit=llvm"],
    ["relax-translate", "--emit=spirv"],
    ["relax-translate", "--emit=ptx"],
    ["relax-translate", "--emit=llvm", "-O", "0"],
    ["relax-run", "--engine", "jit", "--seed", "1"],
    ["relax-run", "--seed", "1"],
]
# Odd values for op attributes (`name=value` keyword arguments of op calls).
ATTR_VALUES = [
    "-1", "0", "-2", "9223372036854775807", "-9223372036854775808", "4294967296",
    "[]", "[1]", "[0, 0]", "[-1, -1]", "[1, 2, 3]", "[1, 2, 3, 4, 5, 6, 7]",
    "(2, 2)", '"NCHW"', '"NCW"', '"NCDHW"', '"OIHW"', '"bogus"', '""', "True", "None",
    "1.5", "-0.5", '"float32"', '"int64"', "R.shape([2, 2])", "[n, n]", "n",
    "[1000000000000, 1]",
]
# Shapes for the new ops' operands: zero, huge and symbolic dims.
SHAPES = ["(1, 1, 1, 1)", "(0, 3, 8, 8)", "(1, 3, 0, 0)", "(1, 3, 2, 2)", "(n, 3, 8, 8)",
          "(1, 3, n, m)", "(4611686018427387904, 4)", "(1, 1, 1)", "(2,)", "()",
          "(1, 4, 2, 8)", "(1, 4, 3, 8)", "(1, 3, 8, 8, 8)"]
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
        op = rng.randrange(12)
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
        elif op == 7:
            # An op attribute given an odd value.
            kws = list(re.finditer(r"\b([a-z_]+)=([^,()\[\]]+|\[[^\]]*\]|\([^()]*\))", lines[i]))
            if kws:
                m = rng.choice(kws)
                lines[i] = lines[i][: m.start(2)] + rng.choice(ATTR_VALUES) + lines[i][m.end(2):]
        elif op == 8:
            # An op argument dropped or duplicated.
            m = re.search(r"(R\.[a-z_.0-9]+)\(([^()]*)\)", lines[i])
            if m:
                args = [a.strip() for a in m.group(2).split(",") if a.strip()]
                if args:
                    k = rng.randrange(len(args))
                    if rng.random() < 0.5:
                        del args[k]
                    else:
                        args.insert(k, args[k])
                    lines[i] = lines[i][: m.start(2)] + ", ".join(args) + lines[i][m.end(2):]
        elif op == 9:
            # A call nested deeply inside itself (TVM-style temporaries).
            m = re.search(r"(R\.[a-z_.0-9]+)\(([a-z_][a-z0-9_]*)", lines[i])
            if m:
                depth = rng.choice([2, 5, 50, 400])
                inner = m.group(2)
                wrap = rng.choice(["R.nn.relu(", "R.negative(", "R.exp("])
                lines[i] = lines[i][: m.start(2)] + wrap * depth + inner + ")" * depth + lines[i][m.end(2):]
        elif op == 10:
            # A tensor annotation given an odd shape.
            m = re.search(r"R\.Tensor\((\([^()]*\))", lines[i])
            if m:
                lines[i] = lines[i][: m.start(1)] + rng.choice(SHAPES) + lines[i][m.end(1):]
        elif op == 11:
            # A block annotation naming a buffer that does not exist, or a nested if.
            ind = re.match(r"\s*", lines[i]).group(0)
            if "T.block(" in lines[i] or "T.sblock(" in lines[i]:
                lines.insert(i + 1, ind + '    T.block_attr({"meta_schedule.auto_tensorize": nobuf})')
                lines.insert(i + 1, ind + "    T.reads(nobuf[0, 0])")
            elif lines[i].strip().startswith("if ") or lines[i].strip().startswith("else"):
                lines.insert(i + 1, ind + "    if cond:")
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
    iters, seed, inputs, backends = 500, 0, [], False
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt = next(it)
        elif a == "--iters":
            iters = int(next(it))
        elif a == "--seed":
            seed = int(next(it))
        elif a == "--backends":
            backends = True
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
        elif "panicked" in err or "internal error" in err:
            why = "panic or internal error"
        elif code == 1 and not re.search(r"(?m)^(<stdin>:\d+:\d+: error: |(relax-[a-z]+: )?error: )", err):
            why = "exit status 1 without an error diagnostic"
        elif code == 0 and "--split-input-file" not in flags:
            back = subprocess.run([relax_opt, "-"], input=out, capture_output=True, text=True, timeout=20)
            if back.returncode != 0:
                why = "output does not read back: " + (back.stderr.strip().splitlines() or [""])[0]
            elif backends and len(out) < 20000 and rng.random() < 0.5:
                tool, *opts = rng.choice(BACKENDS)
                exe = os.path.join(os.path.dirname(relax_opt), tool)
                flags = flags + ["|", tool, *opts]
                try:
                    r = subprocess.run([exe, *opts, "-"], input=out, capture_output=True, text=True, errors="replace", timeout=20)
                    code, err = r.returncode, r.stderr
                except subprocess.TimeoutExpired:
                    code, err = "timeout", ""
                if code not in (0, 1):
                    why = f"{tool}: exit status {code}"
                elif "panicked" in err or "internal error" in err:
                    why = f"{tool}: panic or internal error"
                elif code == 1 and not re.search(r"(?m)^(<stdin>:\d+:\d+: error: |(relax-[a-z]+: )?error: )", err):
                    why = f"{tool}: exit status 1 without an error diagnostic"
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
