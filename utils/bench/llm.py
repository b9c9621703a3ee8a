#!/usr/bin/env python3
"""LLM benchmark: relax against llama.cpp on the same random-weight GGUF files, side by side.

    python3 utils/bench/llm.py [--types f32,q8_0,q4_0,q4_k_m] [--threads T] [--repeat R]
                               [--tests tg,pp16,pp512,depth] [--depth 2000] [--n-gen 32]
                               [--relax-n-gen N] [--timeout S] [--budget S] [--quick]
                               [--cache-dir DIR] [--skip-llama-cpp] [--json OUT] [--bin DIR]

For each file type, on the TinyLlama-1.1B configuration (22 layers, hidden 2048, 32 heads,
4 KV heads, FFN 5632, vocabulary 32000; `relax-gguf gen --preset tinyllama`; `--quick`
takes the `tiny` preset with a 1024-position context instead, Q4_0 only, one run per
test: a smoke run of the harness in about a minute), it measures with the same thread
count on both sides (default: every CPU):

* **tg**: decode tokens/s after a 1-token prompt: llama-bench `-n 32` (`--n-gen`); relax
  decodes `--relax-n-gen` tokens (default the same), so that a slow build still gives a
  figure in reasonable time;
* **pp16**, **pp512**: prefill tokens/s of a 16- and a 512-token prompt (`-p 16`, `-p 512`);
* **tg@depth**: decode tokens/s after a prompt of `--depth` tokens (2000; llama-bench
  `-n 32 -d 2000`);
* **peak RSS** of each process (`wait4`'s `ru_maxrss`), against the file size plus the
  KV cache of that run (relax's: the context rounded up to 32 positions, float16 where
  relax-run has `--cache-type` (its default), else float32; llama.cpp's: the type
  llama-bench reports, f16 by default);
* relax's **startup** (import + pipeline + JIT + weight mapping: a process's wall time
  less the prefill and decode times it reports): cold, from one run with `--no-cache`
  (when relax-run has its compile cache), and cached, the median over a type's test
  runs; with the seconds relax-run reports for compiling or loading the kernels;
* the **roofline**: the multi-threaded read bandwidth that `utils/bench/membw.c` measures
  (compiled here once with `cc -O3 -march=native -fopenmp`) divided by the bytes a decode
  step must read: every tensor of the file except `token_embd` (one row of it);
* the targets (decode >= 0.8x llama.cpp, prefill >= 0.5x, tg >= 70% of the roofline,
  peak RSS <= 1.15 x (file + KV cache)), met or missed per type.

Each process runs at most `--timeout` seconds (default 900): one that runs longer is
killed and its cell reads `timeout`, one that fails reads `failed` and its error is
printed; the other tests still run (exit status 1 when something failed, 0 when runs
only timed out). Ctrl-C prints the tables of what was measured so far.

relax: `relax-run FILE --generate --prompt IDS --max-new-tokens N --context C` (one process
per run; up to `--repeat` runs per test, none started after `--budget` seconds; the median
of the figures its report lines give; the context C is the prompt plus the new tokens, as
llama-bench sizes its context). The thread count goes to `--threads` when `relax-run
--help` has it, else to `RAYON_NUM_THREADS`. llama.cpp: `llama-bench -m FILE -t T -r R -o
json -lm mmap` (or `-mmp 1` on releases with that flag), one process per test (so that
each has its own peak RSS), its default KV cache type (reported) and flash-attention
setting; the median of its samples. Before a type's tests its file is read once, into the
page cache. llama-bench is built once from the llama.cpp that PyPI's `llama-cpp-python`
sdist vendors (`pip download`, then cmake Release with `-DGGML_NATIVE=ON`, CPU only, only
the `llama-bench` target) under `${RELAX_TOOLS_DIR:-~/.cache/relax-tools}/llama.cpp`;
cmake comes from apt when missing. Model files are generated once into `--cache-dir`
(default `${RELAX_TOOLS_DIR:-~/.cache/relax-tools}/llm-models`) and reused; F32 is 4.4 GB.

Needs only the Python standard library and a release build of the tools:
`cargo build --release -p relax-run -p relax-gguf-tool`. Figures and their meaning:
docs/llm.md, "Figures".
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOLS_DIR = os.environ.get("RELAX_TOOLS_DIR") or os.path.expanduser("~/.cache/relax-tools")
LLAMA_CPP_PYTHON = "0.3.36"  # the PyPI release whose vendored llama.cpp is built
TYPES = ["f32", "q8_0", "q4_0", "q4_k_m"]
TESTS = ["tg", "pp16", "pp512", "depth"]
N_GEN = 32


def fail(msg):
    sys.exit(f"llm.py: error: {msg}")


def tail(text, n=30):
    lines = (text or "").strip().splitlines()
    return "\n".join(lines[-n:])


def run_checked(cmd, what, env=None, cwd=None, timeout=None):
    """Runs cmd; on failure exits naming `what`, the command and its output's tail."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    except FileNotFoundError:
        fail(f"{what}: `{cmd[0]}` not found")
    except subprocess.TimeoutExpired:
        fail(f"{what}: timed out after {timeout} s: {' '.join(cmd)}")
    if r.returncode != 0:
        fail(f"{what} failed (exit {r.returncode}): {' '.join(cmd)}\n{tail(r.stderr or r.stdout)}")
    return r


class RunError(Exception):
    """A measured run that gave no figures: `kind` is "timeout" or "failed"."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def short_cmd(cmd, limit=300):
    text = " ".join(map(str, cmd))
    return text if len(text) <= limit else text[:limit] + "..."


def measured(cmd, env=None, timeout=None):
    """Runs cmd as its own process: (stdout, stderr, wall seconds, peak RSS bytes).

    The output goes to files (no pipe can fill while we wait), and `os.wait4` gives this
    child's own resource usage. A run past `timeout` seconds is killed and raises
    RunError("timeout"); a failing one raises RunError("failed") with its stderr's tail.
    A missing program is a setup error: the script exits."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        try:
            p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        except FileNotFoundError:
            fail(f"`{cmd[0]}` not found")
        deadline = None if timeout is None else t0 + timeout
        try:
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if deadline and time.perf_counter() > deadline:
                    p.kill()
                    os.wait4(p.pid, 0)
                    raise RunError("timeout", f"timed out after {timeout:g} s (killed): {short_cmd(cmd)}")
                time.sleep(0.02)
        except KeyboardInterrupt:
            p.kill()
            os.wait4(p.pid, 0)
            raise
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        o, e = out.read(), err.read()
    if code != 0:
        how = f"signal {-code}" if code < 0 else f"exit {code}"
        raise RunError("failed", f"{how}: {short_cmd(cmd)}\n{tail(e or o, 12)}")
    return o, e, wall, ru.ru_maxrss * 1024


def read_through(path):
    """Reads a file once (into the page cache, so that no side pays for the disk); seconds."""
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass
    return time.perf_counter() - t0


def loadavg():
    try:
        return tuple(float(x) for x in open("/proc/loadavg").read().split()[:3])
    except OSError:
        return None


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def mem_total():
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------
# GGUF: the tensor table and the few metadata values the figures need (standard library).

GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_summary(path):
    """{arch, n_layer, n_embd, n_head, n_head_kv, head_dim, n_vocab, tensors: {name: bytes}}.

    A tensor's bytes are the distance to the next tensor's offset (the last: to the end of
    the file), which includes at most `alignment - 1` bytes of padding."""
    with open(path, "rb") as f:
        data = f.read(64 << 20)  # header, metadata and tensor table (vocabularies are < 64 MiB)
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("<Q")
        s = data[pos:pos + n]
        pos += n
        return s.decode("utf-8", "replace")

    def value(t):
        if t in GGUF_SCALARS:
            return take(GGUF_SCALARS[t])
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            if et in GGUF_SCALARS and et not in (7,):
                nonlocal pos
                size = struct.calcsize(GGUF_SCALARS[et])
                pos += size * n  # arrays of numbers are skipped
                return None
            return [value(et) for _ in range(n)] if et != 8 else [string() for _ in range(n)]
        raise ValueError(f"{path}: unknown GGUF value type {t}")

    if data[:4] != b"GGUF":
        fail(f"{path} is not a GGUF file")
    pos = 4
    version = take("<I")
    if version not in (2, 3):
        fail(f"{path}: GGUF version {version} is not supported here")
    n_tensors, n_kv = take("<Q"), take("<Q")
    md = {}
    for _ in range(n_kv):
        key = string()
        md[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        nd = take("<I")
        dims = [take("<Q") for _ in range(nd)]
        gtype, off = take("<I"), take("<Q")
        infos.append((name, dims, gtype, off))
    align = md.get("general.alignment", 32)
    data_start = (pos + align - 1) // align * align
    file_size = os.path.getsize(path)
    ordered = sorted(infos, key=lambda t: t[3])
    tensors = {}
    for i, (name, dims, gtype, off) in enumerate(ordered):
        end = ordered[i + 1][3] if i + 1 < len(ordered) else file_size - data_start
        tensors[name] = {"bytes": end - off, "dims": dims, "type": gtype}
    arch = md["general.architecture"]
    n_head = md[f"{arch}.attention.head_count"]
    n_embd = md[f"{arch}.embedding_length"]
    emb = tensors["token_embd.weight"]
    return {
        "arch": arch,
        "n_layer": md[f"{arch}.block_count"],
        "n_embd": n_embd,
        "n_head": n_head,
        "n_head_kv": md.get(f"{arch}.attention.head_count_kv", n_head),
        "head_dim": md.get(f"{arch}.attention.key_length", n_embd // n_head),
        "n_vocab": emb["dims"][1],
        "file_bytes": file_size,
        "tensors": tensors,
    }


def weight_bytes_per_token(s):
    """Bytes a decode step reads: every tensor but token_embd, plus one row of token_embd."""
    emb = s["tensors"]["token_embd.weight"]["bytes"]
    return sum(t["bytes"] for t in s["tensors"].values()) - emb + emb // s["n_vocab"]


def kv_bytes(s, positions, elem_bytes):
    """The KV cache of `positions` positions: layers x (K, V) x positions x kv heads x head dim."""
    return s["n_layer"] * 2 * positions * s["n_head_kv"] * s["head_dim"] * elem_bytes


# ---------------------------------------------------------------------------------------
# Tools: relax's, the bandwidth probe, llama-bench.


def relax_tools(bin_dir):
    run, gguf = os.path.join(bin_dir, "relax-run"), os.path.join(bin_dir, "relax-gguf")
    for t in (run, gguf):
        if not os.access(t, os.X_OK):
            fail(f"no `{t}`: run `cargo build --release -p relax-run -p relax-gguf-tool` or pass --bin DIR")
    helptext = run_checked([run, "--help"], "relax-run --help").stdout
    return run, gguf, helptext


def git_describe():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True)
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def model_file(gguf_tool, cache, preset, ftype, seed):
    """The model file of `preset` and `ftype`, generated once into `cache`. The `tiny`
    preset gets a context of 1024 positions (its own is 256), room for the pp512 test."""
    os.makedirs(cache, exist_ok=True)
    extra = ["--ctx", "1024"] if preset == "tiny" else []
    path = os.path.join(cache, f"{preset}{'-ctx1024' if extra else ''}-{ftype}-seed{seed}.gguf")
    if not os.path.exists(path):
        print(f"generating {path} (relax-gguf gen; tinyllama Q4_K_M takes minutes)", flush=True)
        t0 = time.perf_counter()
        run_checked([gguf_tool, "gen", "--preset", preset, "--type", ftype, "--seed", str(seed), "-o", path] + extra,
                    f"generating the {ftype} model")
        print(f"  {os.path.getsize(path) / 1e9:.2f} GB in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


def membw(threads, mib):
    """The read bandwidth probe: compiled once per source version, then run."""
    src = os.path.join(HERE, "membw.c")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        fail("no C compiler (`cc`) for utils/bench/membw.c: install gcc (apt-get install gcc)")
    digest = hashlib.sha256(open(src, "rb").read()).hexdigest()[:12]
    exe = os.path.join(TOOLS_DIR, "bin", f"membw-{digest}")
    if not os.path.exists(exe):
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        run_checked([cc, "-O3", "-march=native", "-fopenmp", src, "-o", exe + ".tmp"], "compiling membw.c")
        os.replace(exe + ".tmp", exe)
    r = run_checked([exe, "--threads", str(threads), "--mib", str(mib), "--repeat", "10"], "membw")
    return json.loads(r.stdout.strip().splitlines()[-1])


def ensure_cmake():
    """cmake and a build tool, from apt when missing (Debian), else a clear error."""
    missing = [p for p, exe in (("cmake", "cmake"), ("g++", "g++")) if not shutil.which(exe)]
    if not missing:
        return
    if not shutil.which("apt-get"):
        fail(f"missing {', '.join(missing)} (needed to build llama-bench); install them or pass --skip-llama-cpp")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    print(f"installing {', '.join(missing)} with apt-get", flush=True)
    run_checked(sudo + ["apt-get", "update", "-qq"], "apt-get update")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run_checked(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
                f"apt-get install {' '.join(missing)}", env=env)


def llama_bench():
    """(path of llama-bench, build info): built once from llama-cpp-python's sdist."""
    base = os.path.join(TOOLS_DIR, "llama.cpp")
    build = os.path.join(base, f"build-{LLAMA_CPP_PYTHON}")
    exe = os.path.join(build, "bin", "llama-bench")
    info_path = os.path.join(build, "relax-build-info.json")
    if os.access(exe, os.X_OK) and os.path.exists(info_path):
        return exe, json.load(open(info_path))
    os.makedirs(base, exist_ok=True)
    sdist = os.path.join(base, f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz")
    if not os.path.exists(sdist):
        print(f"downloading llama-cpp-python {LLAMA_CPP_PYTHON}'s source from PyPI (pip download)", flush=True)
        # --no-binary for this package only: its build requirements (scikit-build-core, and
        # cmake when none is installed) may come as wheels, or pip would compile cmake.
        run_checked([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
                     "llama-cpp-python", f"llama-cpp-python=={LLAMA_CPP_PYTHON}", "-d", base],
                    "pip download llama-cpp-python (needs pip and the network; or pass --skip-llama-cpp)")
    src_root = os.path.join(base, f"llama_cpp_python-{LLAMA_CPP_PYTHON}")
    if not os.path.isdir(os.path.join(src_root, "vendor", "llama.cpp", "tools", "llama-bench")):
        with tarfile.open(sdist) as t:
            t.extractall(base, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(base)
    src = os.path.join(src_root, "vendor", "llama.cpp")
    if not os.path.isdir(os.path.join(src, "tools", "llama-bench")):
        fail(f"{sdist} has no vendor/llama.cpp/tools/llama-bench")
    # The sdist has no git history: the vendored commit is the one the changelog names.
    commit = "unknown"
    m = re.search(rf"## \[{re.escape(LLAMA_CPP_PYTHON)}\](.*?)## \[", open(os.path.join(src_root, "CHANGELOG.md")).read(),
                  re.S)
    if m:
        c = re.search(r"llama\.cpp@([0-9a-f]{7,40})", m.group(1))
        commit = c.group(1) if c else commit
    ensure_cmake()
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    flags = ["-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON", "-DGGML_CUDA=OFF", "-DGGML_METAL=OFF",
             "-DGGML_VULKAN=OFF", "-DGGML_OPENMP=ON", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF",
             "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=OFF", "-DLLAMA_BUILD_APP=OFF",
             "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF", f"-DLLAMA_BUILD_COMMIT={commit}", "-DLLAMA_BUILD_NUMBER=0"]
    print(f"building llama-bench of llama.cpp {commit} (llama-cpp-python {LLAMA_CPP_PYTHON}) into {build}; "
          f"this takes several minutes", flush=True)
    t0 = time.perf_counter()
    run_checked(["cmake", "-S", src, "-B", build] + gen + flags, "cmake configure of llama.cpp")
    run_checked(["cmake", "--build", build, "--target", "llama-bench", "-j", str(os.cpu_count() or 1)],
                "building llama-bench")
    if not os.access(exe, os.X_OK):
        fail(f"the llama.cpp build did not produce {exe}")
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()
    info = {"llama_cpp_python": LLAMA_CPP_PYTHON, "commit": commit, "cmake_flags": flags,
            "compiler": cc[0] if cc else "unknown", "build_seconds": round(time.perf_counter() - t0, 1)}
    json.dump(info, open(info_path, "w"), indent=1)
    return exe, info


# ---------------------------------------------------------------------------------------
# Measurements.

PREFILL_RE = re.compile(r"prefill: (\d+) prompt tokens in ([0-9.]+) ms \(([0-9.]+) tokens/s\)")
JIT_RE = re.compile(r"jit: (\d+) kernels ready in ([0-9.]+) s \((\d+) from the compile cache[;)]")
DECODE_RE = re.compile(r"decode: (\d+) tokens in ([0-9.]+) ms \(([0-9.]+) tokens/s, median step ([0-9.]+) ms\)")
TEST_NAMES = {"tg": "tg", "pp16": "pp16", "pp512": "pp512", "depth": "tg@{depth}"}


def prompt_ids(n, n_vocab, seed):
    """n deterministic token ids in [3, n_vocab) (no control tokens)."""
    x, out = seed * 2654435761 + 12345, []
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append(3 + (x >> 33) % (n_vocab - 3))
    return out


def relax_once(run, model, helptext, threads, prompt, new_tokens, context, timeout, extra=()):
    """One relax-run process: its figures (prefill, decode and JIT lines), wall time, peak RSS."""
    cmd = [run, model, "--generate", "--prompt", ",".join(map(str, prompt)), "--max-new-tokens", str(new_tokens),
           "--context", str(context)] + list(extra)
    env = dict(os.environ)
    if "--threads" in helptext:
        cmd += ["--threads", str(threads)]
    else:
        env["RAYON_NUM_THREADS"] = str(threads)
    out, err, wall, rss = measured(cmd, env=env, timeout=timeout)
    p, d = PREFILL_RE.search(err), DECODE_RE.search(err)
    if not p or (new_tokens > 1 and not d):
        raise RunError("failed", f"no prefill or decode line in relax-run's output ({short_cmd(cmd, 120)}):\n"
                                 f"{tail(err, 12)}")
    # tokens/s from the counts and milliseconds: relax-run prints the rate with one decimal.
    r = {"prompt": len(prompt), "new_tokens": new_tokens, "context": context, "wall_s": wall, "rss": rss,
         "prefill_ms": float(p.group(2)), "prefill_tps": int(p.group(1)) / (float(p.group(2)) / 1e3),
         "decode_ms": 0.0}
    if d:
        r.update(decode_tokens=int(d.group(1)), decode_ms=float(d.group(2)),
                 decode_tps=int(d.group(1)) / (float(d.group(2)) / 1e3), median_step_ms=float(d.group(4)))
    j = JIT_RE.search(err)
    if j:
        r.update(kernels=int(j.group(1)), jit_s=float(j.group(2)), kernels_cached=int(j.group(3)))
    r["startup_s"] = wall - (r["prefill_ms"] + r["decode_ms"]) / 1e3
    return r


def relax_shape(test, depth, n_gen):
    """(prompt tokens, new tokens) of a test on relax's side. relax-run's first new token
    comes from the prefill, so tg and tg@depth ask for n_gen + 1 new tokens: n_gen decode
    steps, whose tokens/s is the figure."""
    return {"tg": (1, n_gen + 1), "pp16": (16, 1), "pp512": (512, 1), "depth": (depth, n_gen + 1)}[test]


def padded(n, multiple):
    return (n + multiple - 1) // multiple * multiple


def relax_test(run, model, helptext, s, args, test, depth):
    """Up to `--repeat` runs of a test; no new run once `--budget` seconds have passed,
    and none after a run that timed out or failed."""
    prompt_len, new = relax_shape(test, depth, args.relax_n_gen)
    prompt = prompt_ids(prompt_len, s["n_vocab"], args.seed)
    context = prompt_len + new
    # relax's KV cache: keys and values of the context rounded up to 32 positions, float16
    # where relax-run has --cache-type (its default), else float32.
    elem = 2 if "--cache-type" in helptext else 4
    res = {"status": "ok", "tps": None, "rss": None, "kv_bytes": kv_bytes(s, padded(context, 32), elem), "runs": []}
    t0 = time.perf_counter()
    while len(res["runs"]) < args.repeat and (not res["runs"] or time.perf_counter() - t0 < args.budget):
        try:
            res["runs"].append(relax_once(run, model, helptext, args.threads, prompt, new, context, args.timeout))
        except RunError as e:
            if not res["runs"]:
                res.update(status=e.kind, error=str(e))
            else:
                res["note"] = f"run {len(res['runs']) + 1}: {e}"
            break
    if res["runs"]:
        key = "prefill_tps" if test.startswith("pp") else "decode_tps"
        res["tps"] = statistics.median(r[key] for r in res["runs"])
        res["rss"] = max(r["rss"] for r in res["runs"])
    return res


def llama_test(exe, model, s, args, test, depth, mmap_flag):
    """One llama-bench process for a test (`-r` repeats inside it): the median sample."""
    n_gen = args.n_gen
    shape = {"tg": (0, n_gen, 0), "pp16": (16, 0, 0), "pp512": (512, 0, 0), "depth": (0, n_gen, depth)}[test]
    cmd = [exe, "-m", model, "-t", str(args.threads), "-r", str(args.repeat), "-o", "json",
           "-p", str(shape[0]), "-n", str(shape[1])] + mmap_flag + (["-d", str(shape[2])] if shape[2] else [])
    res = {"status": "ok", "tps": None, "rss": None, "cmd": cmd}
    try:
        out, err, wall, rss = measured(cmd, timeout=args.timeout)
        rows = json.loads(out)
        row = rows[-1]
    except RunError as e:
        res.update(status=e.kind, error=str(e))
        return res
    except (json.JSONDecodeError, IndexError, TypeError):
        res.update(status="failed", error=f"llama-bench printed no JSON row ({short_cmd(cmd)}):\n{tail(out + err, 12)}")
        return res
    samples = row.get("samples_ts") or [row["avg_ts"]]
    # llama-bench's context is n_prompt + n_gen + n_depth; its KV cache type is reported.
    elem = {"f32": 4, "f16": 2, "bf16": 2, "q8_0": 34 / 32}.get(row.get("type_k", "f16"), 2)
    res.update(tps=statistics.median(samples), avg_ts=row["avg_ts"], stddev_ts=row.get("stddev_ts"),
               samples_ts=samples, rss=rss, wall_s=wall, row=row, kv_bytes=kv_bytes(s, sum(shape), elem))
    return res


def fmt_tps(x):
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def cell(r, timeout):
    """A table cell of a test's result: tokens/s, or why there is none."""
    if r is None:
        return "-"
    if r["status"] == "timeout":
        return f"timeout ({timeout:g} s)"
    if r["status"] == "failed":
        return "failed"
    return fmt_tps(r["tps"])


def ratio(a, b):
    return a["tps"] / b["tps"] if a and b and a["tps"] is not None and b["tps"] else None


def table(cols, rows):
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join(["---"] + ["---:"] * (len(cols) - 1)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


# The targets of issue 16 (docs/llm.md, "Figures").
TARGETS = [("decode", "tg, tg@depth >= 0.8x llama.cpp"), ("prefill", "pp16, pp512 >= 0.5x llama.cpp"),
           ("roofline", "tg >= 70% of the roofline"), ("rss", "peak RSS <= 1.15 x (file + KV cache)")]


def target_cells(res, tests):
    """Per target: 'met (x)', 'missed (x)' or '-' (nothing measured)."""
    def verdict(value, ok, text):
        return "-" if value is None else f"{'met' if ok(value) else 'missed'} ({text(value)})"

    rel, ll = res["relax"], res["llama_cpp"]
    worst = lambda xs: min(xs) if xs else None  # noqa: E731
    dec = worst([x for x in (ratio(rel.get(t), ll.get(t)) for t in ("tg", "depth") if t in tests) if x is not None])
    pre = worst([x for x in (ratio(rel.get(t), ll.get(t)) for t in ("pp16", "pp512") if t in tests) if x is not None])
    tg = rel.get("tg")
    roof = tg["tps"] / res["roofline_tg"] if tg and tg["tps"] is not None else None
    rss = max((r["rss"] / (res["file_bytes"] + r["kv_bytes"]) for r in rel.values() if r["rss"]), default=None)
    return [verdict(dec, lambda v: v >= 0.8, lambda v: f"{v:.2g}x"),
            verdict(pre, lambda v: v >= 0.5, lambda v: f"{v:.2g}x"),
            verdict(roof, lambda v: v >= 0.7, lambda v: f"{100 * v:.2g}%"),
            verdict(rss, lambda v: v <= 1.15, lambda v: f"{v:.2f}x")]


def report(env, results, tests, args):
    """The tables: throughput side by side, then roofline and memory, then the targets."""
    depth = env["depth"]
    names = {t: TEST_NAMES[t].format(depth=depth) for t in tests}
    have_ll = any(res["llama_cpp"] for res in results.values())
    cols, rows = ["type"], []
    for t in tests:
        cols += [f"{names[t]} relax"] + ([f"{names[t]} llama.cpp", f"{names[t]} ratio"] if have_ll else [])
    for ty, res in results.items():
        row = [ty.upper()]
        for t in tests:
            r, q = res["relax"].get(t), res["llama_cpp"].get(t)
            row.append(cell(r, args.timeout))
            if have_ll:
                x = ratio(r, q)
                row += [cell(q, args.timeout), f"{x:.2g}x" if x is not None else "-"]
        rows.append(row)
    print(table(cols, rows))
    print()

    cols = ["type", "file GB", "read per token GB", "roofline tg tok/s", "relax tg % of roofline",
            "llama.cpp tg % of roofline", "peak RSS relax GB (x file+KV)", "peak RSS llama.cpp GB (x file+KV)",
            "relax startup s: cold / cached (JIT s)"]
    rows = []
    for ty, res in results.items():
        def pct(r):
            if not r or r["tps"] is None:
                return "-"
            x = 100 * r["tps"] / res["roofline_tg"]
            return f"{x:.0f}%" if x >= 10 else f"{x:.2g}%"

        def rss(side):
            ok = [r for r in res[side].values() if r.get("rss")]
            if not ok:
                return "-"
            worst = max(ok, key=lambda r: r["rss"] / (res["file_bytes"] + r["kv_bytes"]))
            return f"{max(r['rss'] for r in ok) / 1e9:.2f} ({worst['rss'] / (res['file_bytes'] + worst['kv_bytes']):.2f}x)"

        startup = res.get("relax_startup_s")
        cold = res.get("relax_cold") or {}
        jit = [r["jit_s"] for t in res["relax"].values() for r in t["runs"] if "jit_s" in r]
        start = " / ".join([f"{cold['startup_s']:.1f} ({cold['jit_s']:.1f})" if "jit_s" in cold else
                            f"{cold['startup_s']:.1f}" if "startup_s" in cold else "-",
                            f"{startup:.1f}" if startup is not None else "-"])
        if jit:
            start += f" ({statistics.median(jit):.2f})"
        rows.append([ty.upper(), f"{res['file_bytes'] / 1e9:.3g}", f"{res['weight_bytes_per_token'] / 1e9:.3g}",
                     fmt_tps(res["roofline_tg"]), pct(res["relax"].get("tg")), pct(res["llama_cpp"].get("tg")),
                     rss("relax"), rss("llama_cpp"), start])
    print(table(cols, rows))
    print()
    if have_ll:
        print(table(["type"] + [f"{k}: {v}" for k, v in TARGETS],
                    [[ty.upper()] + target_cells(res, tests) for ty, res in results.items()]))
        print()
    print(f"tokens/s; relax: median of up to {args.repeat} runs of {args.relax_n_gen} decode steps (tg), "
          f"llama.cpp: median of {args.repeat} llama-bench samples of {args.n_gen} tokens; ratio = relax / llama.cpp; "
          f"roofline tg = read bandwidth {env['membw']['best_gbs']:.1f} GB/s / bytes read per token; "
          f"peak RSS: the largest of the tests, (x file+KV): the worst test's RSS / (file size + its KV cache); "
          f"relax startup: a relax-run process's wall time less its prefill and decode (import, pipeline, JIT, "
          f"mapping): cold = one run with --no-cache, cached = the median of the test runs (the JIT's compile "
          f"cache warm), JIT = the seconds relax-run reports for compiling or loading the kernels")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--types", help=f"file types (default {','.join(TYPES)}; with --quick q4_0)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for both sides (default: all CPUs)")
    ap.add_argument("--repeat", type=int, help="runs per test and side (default 3, with --quick 1; the median)")
    ap.add_argument("--tests", default=",".join(TESTS), help=f"tests (default {','.join(TESTS)})")
    ap.add_argument("--depth", type=int, default=None, help="prompt length of the depth test (default 2000)")
    ap.add_argument("--n-gen", type=int, default=N_GEN, help=f"llama.cpp's decode tokens of tg, tg@depth (default {N_GEN})")
    ap.add_argument("--relax-n-gen", type=int, default=None,
                    help="relax's decode steps of tg, tg@depth (default: --n-gen); fewer keep slow runs short")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds one process may run before it is killed and reported as a timeout (default 900, "
                         "with --quick 120)")
    ap.add_argument("--budget", type=float, default=300,
                    help="seconds after which relax starts no new repeat of a test (default 300; at least one run)")
    ap.add_argument("--quick", action="store_true", help="the tiny preset: a smoke run of the harness")
    ap.add_argument("--cache-dir", default=None, help="where the model files are generated and kept")
    ap.add_argument("--seed", type=int, default=0, help="the models' random seed (default 0)")
    ap.add_argument("--skip-llama-cpp", action="store_true", help="measure relax only")
    ap.add_argument("--bin", default=os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR", "target"), "release"),
                    help="the folder of relax-run and relax-gguf (default target/release)")
    ap.add_argument("--json", help="write the raw figures to this JSON file")
    args = ap.parse_args()

    if args.types is None:
        args.types = "q4_0" if args.quick else ",".join(TYPES)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.relax_n_gen is None:
        args.relax_n_gen = args.n_gen
    if args.timeout is None:
        args.timeout = 120 if args.quick else 900
    types = [t.strip().lower() for t in args.types.split(",") if t.strip()]
    for t in types:
        if t not in TYPES:
            fail(f"unknown type `{t}` (types: {', '.join(TYPES)})")
    tests = [t.strip() for t in args.tests.split(",") if t.strip()]
    for t in tests:
        if t not in TESTS:
            fail(f"unknown test `{t}` (tests: {', '.join(TESTS)})")
    if not types or not tests:
        fail("no type or no test to run")
    if min(args.threads, args.repeat, args.n_gen, args.relax_n_gen) < 1 or args.timeout <= 0:
        fail("--threads, --repeat, --n-gen, --relax-n-gen and --timeout must be positive")
    preset = "tiny" if args.quick else "tinyllama"
    depth = args.depth if args.depth is not None else (200 if args.quick else 2000)
    if depth < 1:
        fail("--depth must be positive")
    cache = args.cache_dir or os.path.join(TOOLS_DIR, "llm-models")

    run, gguf_tool, helptext = relax_tools(args.bin)
    skipped = []
    bench_exe, bench_info, mmap_flag = None, None, []
    if args.skip_llama_cpp:
        skipped.append("llama.cpp (--skip-llama-cpp)")
    else:
        bench_exe, bench_info = llama_bench()
        h = subprocess.run([bench_exe, "--help"], capture_output=True, text=True)
        h = h.stdout + h.stderr
        mmap_flag = ["-mmp", "1"] if "--mmap" in h else (["-lm", "mmap"] if "--load-mode" in h else [])
        if "--n-depth" not in h and "depth" in tests:
            fail("this llama-bench has no -d/--n-depth for the depth test; drop `depth` from --tests")
        v = subprocess.run([bench_exe, "--version"], capture_output=True, text=True)
        bench_info["version"] = tail(v.stdout + v.stderr, 2).replace("\n", "; ")

    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "cpu": cpu_model(),
           "cpus": os.cpu_count(), "mem_bytes": mem_total(), "threads": args.threads, "repeat": args.repeat,
           "relax_commit": git_describe(), "relax_threads_via": "--threads" if "--threads" in helptext
           else "RAYON_NUM_THREADS", "preset": preset, "depth": depth, "n_gen": args.n_gen,
           "relax_n_gen": args.relax_n_gen, "timeout_s": args.timeout, "load_start": loadavg(),
           "llama_cpp": bench_info, "skipped": skipped}
    print(f"{env['date']}  {env['cpu']}, {env['cpus']} CPUs, {(env['mem_bytes'] or 0) / 2**30:.0f} GiB; "
          f"{args.threads} threads (relax via {env['relax_threads_via']}); up to {args.repeat} runs per test; "
          f"timeout {args.timeout:g} s per process; load average {env['load_start']}")
    print(f"relax {env['relax_commit']} ({run})")
    if bench_info:
        print(f"llama.cpp {bench_info['commit']} from llama-cpp-python {bench_info['llama_cpp_python']} "
              f"({bench_info['version']}); {bench_info['compiler']}; flags {' '.join(bench_info['cmake_flags'])}; "
              f"llama-bench {' '.join(mmap_flag)}")

    bw = membw(args.threads, 256 if args.quick else 1024)
    env["membw"] = bw
    print(f"read bandwidth ({args.threads} threads, {bw['mib']} MiB, utils/bench/membw.c): best {bw['best_gbs']:.1f} "
          f"GB/s, median {bw['median_gbs']:.1f} GB/s", flush=True)

    results = {}
    try:
        for t in types:
            model = model_file(gguf_tool, cache, preset, t, args.seed)
            s = gguf_summary(model)
            wbytes = weight_bytes_per_token(s)
            res = {"file": model, "file_bytes": s["file_bytes"], "weight_bytes_per_token": wbytes,
                   "roofline_tg": bw["best_gbs"] * 1e9 / wbytes, "relax": {}, "llama_cpp": {}}
            results[t] = res
            secs = read_through(model)
            print(f"{t}: {model}: {s['file_bytes'] / 1e9:.3f} GB (read into the page cache in {secs:.1f} s), "
                  f"{wbytes / 1e9:.3f} GB of weights read per token", flush=True)
            # relax's startup without its compile cache (when it has one): a 1-token prompt.
            if "--no-cache" in helptext:
                try:
                    cold = relax_once(run, model, helptext, args.threads, prompt_ids(1, s["n_vocab"], args.seed), 1, 32,
                                      args.timeout, ["--no-cache"])
                    res["relax_cold"] = cold
                    print(f"  relax startup without the compile cache: {cold['startup_s']:.1f} s"
                          + (f" (JIT {cold['jit_s']:.1f} s, {cold['kernels']} kernels)" if "jit_s" in cold else ""),
                          flush=True)
                except RunError as e:
                    res["relax_cold"] = {"status": e.kind, "error": str(e)}
                    print(f"  relax startup run without the compile cache: {e}", flush=True)
            for test in tests:
                name = TEST_NAMES[test].format(depth=depth)
                r = res["relax"][test] = relax_test(run, model, helptext, s, args, test, depth)
                line = f"  {name:<8} relax {cell(r, args.timeout):>10} tokens/s"
                if r["runs"]:
                    line += f" ({len(r['runs'])} run{'s' if len(r['runs']) > 1 else ''}, RSS {r['rss'] / 1e9:.2f} GB)"
                if bench_exe:
                    q = res["llama_cpp"][test] = llama_test(bench_exe, model, s, args, test, depth, mmap_flag)
                    line += f"   llama.cpp {cell(q, args.timeout):>10} tokens/s"
                    if q["rss"]:
                        line += f" (RSS {q['rss'] / 1e9:.2f} GB)"
                    x = ratio(r, q)
                    if x is not None:
                        line += f"   relax/llama.cpp {x:.2g}x"
                print(line, flush=True)
                for side, x in (("relax", r), ("llama.cpp", res["llama_cpp"].get(test))):
                    if x and x.get("error"):
                        print(f"    {side}: {x['error']}".replace("\n", "\n    "), flush=True)
                    if x and x.get("note"):
                        print(f"    {side}: fewer runs: {x['note']}".replace("\n", "\n    "), flush=True)
            runs = [x for test in tests for x in res["relax"][test]["runs"]]
            res["relax_startup_s"] = statistics.median(x["startup_s"] for x in runs) if runs else None
    except KeyboardInterrupt:
        print("\ninterrupted: the tables below hold what was measured", flush=True)
    env["load_end"] = loadavg()

    rows = [q["row"] for res in results.values() for q in res["llama_cpp"].values() if q.get("row")]
    if rows:
        env["llama_cpp_settings"] = {k: rows[0].get(k) for k in ("type_k", "type_v", "flash_attn", "n_batch",
                                                                 "n_ubatch", "use_mmap", "load_mode", "repack",
                                                                 "backends", "cpu_info") if k in rows[0]}
    print()
    print(f"load average at the start {env['load_start']}, at the end {env['load_end']}")
    if env.get("llama_cpp_settings"):
        print(f"llama.cpp settings: {env['llama_cpp_settings']}")
    print()
    if results:
        report(env, results, tests, args)
    for s in skipped:
        print(f"skipped: {s}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "results": results}, f, indent=1)
        print(f"raw figures: {args.json}")
    failed = [f"{t} {test} {side}" for t, res in results.items() for side in ("relax", "llama_cpp")
              for test, r in res[side].items() if r["status"] != "ok"]
    if failed:
        print(f"no figure (timeout or failure): {', '.join(failed)}")
    if any(r["status"] == "failed" for res in results.values() for side in ("relax", "llama_cpp")
           for r in res[side].values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
