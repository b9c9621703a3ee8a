#!/usr/bin/env python3
"""Benchmarks of `relax-run --engine jit` against numpy, measured side by side in one run.

Usage: utils/bench/bench.py [--relax-run PATH] [--repeat N] [--threads N] [--only NAME,...]
                            [--tvm-python PATH]

Each case writes seeded inputs as .npy files, runs `relax-run --engine jit --repeat N`
(the median of N calls of the entry function: kernels are compiled once before the
first call, inputs are copied before the clock starts and freed after it stops; the
result tensors are allocated inside the timed call, as numpy allocates its results), checks the result
against numpy, times the numpy expression (median of N), and prints both times and their
ratio. `--threads N` gives every side N threads (OpenBLAS, relax-run's `--threads`, TVM's
pool); by default each uses every CPU.

numpy's side runs with OpenBLAS's own choice of kernel: the variables OPENBLAS_CORETYPE
and OPENBLAS_L2_SIZE, which some machines set and which force a slower kernel, are unset
in this process before numpy loads (relax-run and TVM get the environment as it was),
and the OpenBLAS kernel numpy runs is printed (threadpoolctl when installed, else
OpenBLAS's own functions through ctypes). Cases (docs/codegen.md, "Figures"):

* `matmul_block`: matmul(x: (n, 256), w: (256, 256)) + 1 -> relu -> exp, n = 1, 16, 128;
* `sgemm`: float32 (1024, 1024) x (1024, 1024), GFLOP/s against numpy's `a @ b`;
* `elementwise`: a fused chain of four elementwise ops over 16 M float32 values, as
  bandwidth (bytes read + written per second) against numpy's copy `x.copy()`;
* `llama`: the Llama decoder block of test/Transform/fuse-ops/llama.rlx scaled to
  hidden size 512 (8 heads of 64, MLP 1024), one decode step (n = 1) over a cache of
  m = 256 positions: the JIT against the reference interpreter (`--engine interp`) and
  against numpy running the same block.

With `--tvm-python` (a Python with apache-tvm, e.g. ~/.cache/relax-peers/tvm027/bin/python),
each case also runs the same module text in TVM, built by its default CPU pipeline
(`utils/bench/kernel_tvm.py`: `tvm.compile(mod, "llvm")`, no tuning), checks TVM's
result against numpy, and prints relax's time against TVM's.

Needs numpy and a release build: `cargo build --release -p relax-run`.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

# `--threads N` must reach OpenBLAS before numpy loads it (relax-run gets `--threads`).
if "--threads" in sys.argv[:-1]:
    _n = sys.argv[sys.argv.index("--threads") + 1]
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS"):
        os.environ[_v] = _n

# The environment the other sides (relax-run, TVM) run in: the caller's, as it was.
SIDE_ENV = dict(os.environ)
# numpy's side runs with OpenBLAS's own choice of kernel: OPENBLAS_CORETYPE forces one
# (Haswell, without AVX-512, on these machines) and OPENBLAS_L2_SIZE its blocking. OpenBLAS
# reads both when numpy loads it, so they are unset in this process before the import,
# and only here: the subprocesses get SIDE_ENV.
FORCED_BLAS = {v: os.environ.pop(v) for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v in os.environ}

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


KERNEL_TIME = [None]  # the median time inside compiled kernels of the last relax_time call


def save_inputs(inputs, tmp, prefix):
    """Writes the arrays as tmp/<prefix><i>.npy; returns the paths."""
    paths = []
    for i, a in enumerate(inputs):
        p = os.path.join(tmp, f"{prefix}{i}.npy")
        np.save(p, a)
        paths.append(p)
    return paths


THREADS = [None]  # relax-run's `--threads`, when given


def relax_time(relax_run, module, inputs, tmp, repeat, engine="jit", entry="main", syms=()):
    """Runs relax-run; returns (median seconds, result arrays)."""
    paths = save_inputs(inputs, tmp, "in")
    out_dir = os.path.join(tmp, "out")
    cmd = [relax_run, module, "--entry", entry, "--engine", engine, "--repeat", str(repeat), "--output-dir", out_dir]
    if engine == "jit":
        cmd.append("--unchecked")  # numpy's kernels do not check indices either
    if THREADS[0]:
        cmd += ["--threads", str(THREADS[0])]
    for p in paths:
        cmd += ["--input", p]
    for s in syms:
        cmd += ["--sym", s]
    r = subprocess.run(cmd, capture_output=True, text=True, env=SIDE_ENV)
    if r.returncode != 0:
        sys.exit(f"relax-run failed ({' '.join(cmd)}):\n{r.stderr}")
    m = re.search(r"median time of \d+ runs: ([0-9.]+) ms", r.stderr)
    if not m:
        sys.exit(f"no timing in relax-run's output:\n{r.stderr}")
    k = re.search(r"median time in compiled kernels: ([0-9.]+) ms", r.stderr)
    KERNEL_TIME[0] = float(k.group(1)) / 1e3 if k else None
    return float(m.group(1)) / 1e3, load_outputs(out_dir)


def load_outputs(out_dir):
    """The arrays out0.npy, out1.npy, ... of a folder, in order."""
    outs = []
    while os.path.exists(os.path.join(out_dir, f"out{len(outs)}.npy")):
        outs.append(np.load(os.path.join(out_dir, f"out{len(outs)}.npy")))
    return outs


def tvm_time(args, module, inputs, tmp, entry="main"):
    """Runs kernel_tvm.py under --tvm-python; (median seconds, results), or None without TVM."""
    if not args.tvm_python:
        return None
    import json

    paths = save_inputs(inputs, tmp, "tvm_in")
    out_dir = os.path.join(tmp, "tvm_out")
    cmd = [args.tvm_python, os.path.join(HERE, "kernel_tvm.py"), module, entry, str(args.repeat), out_dir] + paths
    r = subprocess.run(cmd, capture_output=True, text=True, env=SIDE_ENV)
    if r.returncode != 0:
        sys.exit(f"TVM failed ({' '.join(cmd)}):\n{r.stderr[-2000:]}")
    median = json.loads(r.stdout.strip().splitlines()[-1])["median_s"]
    return median, load_outputs(out_dir)


def tvm_row(name, t_relax, tvm):
    """Prints relax's time against TVM's default build, when TVM ran."""
    if tvm is not None:
        print(f"{'  against TVM':<28} relax {t_relax * 1e3:9.3f} ms   TVM   {tvm[0] * 1e3:9.3f} ms   "
              f"relax/TVM time {t_relax / tvm[0]:7.2f}   ({name}; TVM's default CPU build, untuned)")


def blas_report():
    """numpy's BLAS libraries: library, version, the kernel it chose and its threads, as
    threadpoolctl reports them when it is installed, else from OpenBLAS itself (its
    `openblas_get_corename` / `openblas_get_config`, called through ctypes on the
    library numpy loaded)."""
    try:
        import threadpoolctl
    except ImportError:
        return openblas_report()
    libs = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    if not libs:
        return ["none found by threadpoolctl"]
    return [f"{i.get('internal_api')} {i.get('version')}, kernel {i.get('architecture', '?')}, "
            f"{i.get('num_threads')} threads ({i.get('threading_layer', '?')}; {os.path.basename(i.get('filepath', ''))})"
            for i in libs]


def openblas_report():
    """The loaded BLAS libraries (from /proc/self/maps); for OpenBLAS, its configuration,
    kernel and threads through its own functions (numpy's wheels name them with a
    `scipy_` prefix and a `64_` suffix)."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            paths = sorted({ln.split()[-1] for ln in f if "blas" in ln.lower() and "/" in ln})
    except OSError:
        return ["unknown (no /proc/self/maps; install threadpoolctl to see it)"]
    if not paths:
        return ["none loaded"]
    out = []
    for path in paths:
        lib = ctypes.CDLL(path)

        def fn(name, restype):
            for pre, suf in (("scipy_", "64_"), ("", "64_"), ("scipy_", ""), ("", "")):
                f = getattr(lib, f"{pre}{name}{suf}", None)
                if f is not None:
                    f.restype = restype
                    return f
            return None

        core, config, threads = fn("openblas_get_corename", ctypes.c_char_p), fn(
            "openblas_get_config", ctypes.c_char_p), fn("openblas_get_num_threads", ctypes.c_int)
        if core is None:
            out.append(f"{os.path.basename(path)} (not OpenBLAS)")
            continue
        cfg = config().decode() if config else "?"
        n = threads() if threads else "?"
        out.append(f"{cfg}, kernel {core().decode()}, {n} threads ({os.path.basename(path)})")
    return out


def np_time(fn, repeat):
    """Median seconds of `fn()` over `repeat` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def check(name, got, want, rtol=1e-4, atol=1e-5):
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
        err = np.max(np.abs(got.astype(np.float64) - want)) if got.shape == want.shape else "shape"
        sys.exit(f"{name}: relax's result differs from numpy's (max abs error {err})")


def row(name, relax_s, ref_s, what, ratio_name, ratio, target):
    print(f"{name:<28} relax {relax_s * 1e3:9.3f} ms   {what} {ref_s * 1e3:9.3f} ms   "
          f"{ratio_name} {ratio:7.2f}   (target {target})")


def bench_matmul_block(args, tmp):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((256, 256), dtype=np.float32) * np.float32(0.05)
    module = os.path.join(HERE, "matmul_block.rlx")
    for n in (1, 16, 128):
        x = rng.standard_normal((n, 256), dtype=np.float32) * np.float32(0.05)
        t_relax, (out,) = relax_time(args.relax_run, module, [x, w], tmp, args.repeat)
        ref = lambda: np.exp(np.maximum(x @ w + np.float32(1), np.float32(0)))
        check(f"matmul_block n={n}", out, ref())
        t_np = np_time(ref, args.repeat)
        row(f"matmul_block n={n}", t_relax, t_np, "numpy", "relax/numpy time", t_relax / t_np,
            {128: "<= 1 at n=128", 1: "<= 2 at n=1"}.get(n, "-"))
        tvm = tvm_time(args, module, [x, w], tmp)
        if tvm:
            check(f"matmul_block n={n} (TVM)", tvm[1][0], ref())
        tvm_row(f"matmul_block n={n}", t_relax, tvm)


def bench_sgemm(args, tmp):
    rng = np.random.default_rng(2)
    n = 1024
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    t_relax, (out,) = relax_time(args.relax_run, os.path.join(HERE, "sgemm.rlx"), [a, b], tmp, args.repeat)
    check("sgemm", out, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)
    t_np = np_time(lambda: a @ b, args.repeat)
    flops = 2.0 * n ** 3
    print(f"{'sgemm 1024^3':<28} relax {flops / t_relax / 1e9:9.1f} GFLOP/s   numpy {flops / t_np / 1e9:9.1f} GFLOP/s"
          f"   relax/numpy GFLOP/s {t_np / t_relax:7.2f}   (target >= 0.9)")
    tvm = tvm_time(args, os.path.join(HERE, "sgemm.rlx"), [a, b], tmp)
    if tvm:
        check("sgemm (TVM)", tvm[1][0], a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)
    tvm_row("sgemm", t_relax, tvm)


def bench_elementwise(args, tmp):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    t_relax, (out,) = relax_time(args.relax_run, os.path.join(HERE, "elementwise.rlx"), [x], tmp, args.repeat)
    two, one, zero, three = (np.float32(v) for v in (2, 1, 0, 3))
    check("elementwise", out, np.maximum(x * two + one, zero) - three)
    t_copy = np_time(lambda: x.copy(), args.repeat)
    t_chain = np_time(lambda: np.maximum(x * two + one, zero) - three, args.repeat)
    t_kernel = KERNEL_TIME[0]
    o = np.empty_like(x)
    t_copyto = np_time(lambda: np.copyto(o, x), args.repeat)
    tvm = tvm_time(args, os.path.join(HERE, "elementwise.rlx"), [x], tmp)
    if tvm:
        check("elementwise (TVM)", tvm[1][0], np.maximum(x * two + one, zero) - three)
    moved = 2.0 * x.nbytes
    print(f"{'elementwise chain 16M':<28} relax {moved / t_relax / 1e9:9.2f} GB/s   numpy copy {moved / t_copy / 1e9:6.2f} GB/s"
          f"   relax/copy bandwidth {t_copy / t_relax:7.2f}   (target >= 0.8; numpy's own chain: "
          f"{moved / t_chain / 1e9:.2f} GB/s)")
    print(f"{'  in the kernel alone':<28} relax {moved / t_kernel / 1e9:9.2f} GB/s   numpy copyto {moved / t_copyto / 1e9:5.2f} GB/s"
          f"   relax/copyto bandwidth {t_copyto / t_kernel:5.2f}   (the kernel's own time, writing a result storage "
          f"recycled from an earlier run, against numpy's copy into an existing array: like for like)")
    tvm_row("elementwise chain", t_relax, tvm)


LLAMA = dict(hidden=512, heads=8, head_dim=64, ffn=1024)


def llama_module(tmp):
    """test/Transform/fuse-ops/llama.rlx with the sizes of LLAMA."""
    src = open(os.path.join(ROOT, "test/Transform/fuse-ops/llama.rlx")).read()
    body = src[src.index("@I.ir_module"):]
    h, nh, d, f = LLAMA["hidden"], LLAMA["heads"], LLAMA["head_dim"], LLAMA["ffn"]
    subst = {
        "192": 3 * h, "256": 2 * f, "128": f, "64": h, "12": 3 * nh, "16": d, "4": nh, "8": d // 2,
        "0.25": 1 / np.sqrt(d),
    }
    # Rewrite the numbers that are sizes: dims in shapes, slice bounds, the 1/sqrt(d) scale.
    def repl(m):
        return str(subst[m.group(0)]) if m.group(0) in subst else m.group(0)
    body = re.sub(r"(?<![\w.])(192|256|128|64|12|16|4|8|0\.25)(?![\w.])", repl, body)
    path = os.path.join(tmp, "llama_block.rlx")
    open(path, "w").write(body)
    return path


def llama_numpy(x, past_k, past_v, cos, sin, w_norm, w_qkv, w_o, w_norm2, w_gate_up, w_down):
    h, nh, d, f = LLAMA["hidden"], LLAMA["heads"], LLAMA["head_dim"], LLAMA["ffn"]
    n = x.shape[1]

    def rms(t, w):
        return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + np.float32(1e-5)) * w

    def rope(t):
        rot = np.concatenate([-t[..., d // 2:], t[..., :d // 2]], axis=-1)
        return t * cos.reshape(1, n, 1, d) + rot * sin.reshape(1, n, 1, d)

    qkv = (rms(x, w_norm) @ w_qkv).reshape(1, n, 3 * nh, d)
    q, k, v = qkv[:, :, :nh], qkv[:, :, nh:2 * nh], qkv[:, :, 2 * nh:]
    k_all = np.concatenate([past_k, rope(k)], axis=1)
    v_all = np.concatenate([past_v, v], axis=1)
    s = (rope(q).transpose(0, 2, 1, 3) @ k_all.transpose(0, 2, 3, 1)) * np.float32(1 / np.sqrt(d))
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    o = (p @ v_all.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3).reshape(1, n, h)
    h2 = x + o @ w_o
    gu = rms(h2, w_norm2) @ w_gate_up
    g, u = gu[..., :f], gu[..., f:]
    out = h2 + (g / (1 + np.exp(-g)) * u) @ w_down
    return out, k_all, v_all


def bench_llama(args, tmp):
    module = llama_module(tmp)
    h, nh, d, f = LLAMA["hidden"], LLAMA["heads"], LLAMA["head_dim"], LLAMA["ffn"]
    n, m = 1, 256
    rng = np.random.default_rng(4)
    r = lambda *s: (rng.standard_normal(s, dtype=np.float32) * np.float32(0.1))
    inputs = [r(1, n, h), r(1, m, nh, d), r(1, m, nh, d), r(n, d), r(n, d), r(h) + 1, r(h, 3 * h), r(h, h), r(h) + 1,
              r(h, 2 * f), r(f, h)]
    syms = (f"n={n}", f"m={m}")
    t_jit, outs = relax_time(args.relax_run, module, inputs, tmp, args.repeat, entry="decoder_block", syms=syms)
    want = llama_numpy(*inputs)
    for got, w in zip(outs, want):
        check("llama", got, w, rtol=1e-3, atol=1e-4)
    t_interp, _ = relax_time(args.relax_run, module, inputs, tmp, max(3, args.repeat // 10), engine="interp",
                             entry="decoder_block", syms=syms)
    t_np = np_time(lambda: llama_numpy(*inputs), args.repeat)
    print(f"{'llama block decode (n=1)':<28} jit {t_jit * 1e3:9.3f} ms   numpy {t_np * 1e3:9.3f} ms   "
          f"jit/numpy time {t_jit / t_np:7.2f}   (target <= 1.5)   interp {t_interp * 1e3:.3f} ms, "
          f"interp/jit time {t_interp / t_jit:.1f}")
    tvm = tvm_time(args, module, inputs, tmp, entry="decoder_block")
    if tvm:
        for got, w in zip(tvm[1], want):
            check("llama (TVM)", got, w, rtol=1e-3, atol=1e-4)
    tvm_row("llama block decode", t_jit, tvm)


CASES = {"matmul_block": bench_matmul_block, "sgemm": bench_sgemm, "elementwise": bench_elementwise,
         "llama": bench_llama}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--relax-run", default=os.path.join(ROOT, "target/release/relax-run"))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--threads", type=int, help="threads for numpy's BLAS and relax-run (default: all CPUs)")
    ap.add_argument("--tvm-python", help="a Python with apache-tvm: also time TVM's default build of each module")
    args = ap.parse_args()
    if not os.path.exists(args.relax_run):
        sys.exit(f"no `{args.relax_run}`: run `cargo build --release -p relax-run` or pass --relax-run")
    threads = args.threads or os.cpu_count()
    THREADS[0] = args.threads
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, {threads} threads, relax-run {args.relax_run}, "
          f"{args.repeat} repeats")
    for line in blas_report():
        print(f"numpy's BLAS: {line}")
    unset = ", ".join(f"{k}={v}" for k, v in FORCED_BLAS.items())
    print(f"numpy's side runs without {unset} (relax-run and TVM get them)" if unset else
          "numpy's side: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE were not set")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            CASES[name](args, tmp)


if __name__ == "__main__":
    main()
