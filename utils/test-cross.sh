#!/usr/bin/env bash
# The cross-compilation test (docs/library.md):
# 1. examples/mlp.rlx as a shared library and the C example (examples/c/run_model.c)
#    with the C runtime, built for the host and for aarch64 (Debian's cross gcc, Rust's
#    aarch64 target), run natively and under qemu-aarch64: both must give the
#    interpreter's numbers (relax-run --engine interp on the same inputs);
# 2. more modules (a decoder block with a KV cache, a CNN, ops through their
#    legalization) as aarch64 libraries, run under qemu by the Rust API's example
#    (relax-capi's examples/run_library.rs) on seeded inputs: the interpreter's numbers.
# Says it is skipped, and why, when a cross tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir="$(realpath "${CARGO_TARGET_DIR:-target}")"
out="$target_dir/cross-test"
mkdir -p "$out"
skip() { echo "test-cross: skipped: $*"; exit 0; }
command -v qemu-aarch64 >/dev/null || skip "qemu-aarch64 is not installed (Debian package qemu-user)"
command -v aarch64-linux-gnu-gcc >/dev/null || skip "aarch64-linux-gnu-gcc is not installed (gcc-aarch64-linux-gnu)"
rustup target list --installed 2>/dev/null | grep -q '^aarch64-unknown-linux-gnu$' ||
  skip "Rust's aarch64-unknown-linux-gnu target is not installed (rustup target add aarch64-unknown-linux-gnu)"

cargo build --quiet -p relax-translate -p relax-run
# Alone, so that the runtime is built without the features the tools turn on (no LLVM).
cargo build --quiet -p relax-capi
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
  cargo build --quiet -p relax-capi --lib --examples --target aarch64-unknown-linux-gnu
bin="$target_dir/debug"
model=examples/mlp.rlx
shapes=(8x64 64x128 128 128x10)

"$bin/relax-translate" "$model" --emit=lib -o "$out/mlp-x86_64.so"
"$bin/relax-translate" "$model" --emit=lib --target aarch64-linux-gnu -o "$out/mlp-aarch64.so"
cc -O1 examples/c/run_model.c -Ilib/relax-capi/include "$bin/librelax_runtime_c.a" -lm -ldl -lpthread -o "$out/run_model-x86_64"
aarch64-linux-gnu-gcc -O1 examples/c/run_model.c -Ilib/relax-capi/include \
  "$target_dir/aarch64-unknown-linux-gnu/debug/librelax_runtime_c.a" -lm -ldl -lpthread -o "$out/run_model-aarch64"

"$out/run_model-x86_64" "$out/mlp-x86_64.so" main "${shapes[@]}" > "$out/x86_64.txt"
qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/run_model-aarch64" "$out/mlp-aarch64.so" main "${shapes[@]}" > "$out/aarch64.txt"

# The interpreter on the same inputs.
/usr/bin/python3 - "$out" "${shapes[@]}" <<'PY'
import sys, numpy as np
out, shapes = sys.argv[1], sys.argv[2:]
for p, s in enumerate(shapes):
    dims = [int(d) for d in s.split("x")]
    n = int(np.prod(dims))
    i = np.arange(n, dtype=np.int64)
    x = (((i * 37 + p) % 101).astype(np.float32) / np.float32(101.0) - np.float32(0.5)).astype(np.float32)
    np.save(f"{out}/in{p}.npy", x.reshape(dims))
PY
inputs=()
for p in "${!shapes[@]}"; do inputs+=(--input "$out/in$p.npy"); done
"$bin/relax-run" "$model" --entry main "${inputs[@]}" --output-dir "$out/interp"

/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
def read(path):
    outs, cur = [], None
    for line in open(path):
        if line.startswith("out"):
            cur = []
            outs.append(cur)
        else:
            cur.append(float(line))
    return [np.array(o, dtype=np.float32) for o in outs]
x86, arm = read(f"{out}/x86_64.txt"), read(f"{out}/aarch64.txt")
ref = [np.load(f"{out}/interp/out0.npy").ravel()]
assert len(x86) == len(arm) == len(ref), (len(x86), len(arm), len(ref))
for name, got in (("x86-64", x86), ("aarch64 under qemu", arm)):
    for g, r in zip(got, ref):
        if g.shape != r.shape or not np.allclose(g, r, rtol=1e-5, atol=1e-6):
            sys.exit(f"test-cross: {name}: results differ from the interpreter's (max diff {np.abs(g - r).max()})")
print(f"test-cross: the library gives the interpreter's numbers on x86-64 and on aarch64 under qemu ({ref[0].size} values)")
PY

# 2. Other modules through the Rust API under qemu: FILE ENTRY SYMS...
run_library="$target_dir/aarch64-unknown-linux-gnu/debug/examples/run_library"
cases=(
  "test/Transform/fuse-ops/llama.rlx decoder_block n=3 m=5"
  "test/Run/cnn.rlx main"
  "test/Run/nn-ops.rlx ln"
  "test/Run/nn-ops.rlx gelu"
  "test/Run/legalized-ops.rlx rs"
  "examples/mlp.rlx mlp n=5"
)
for case in "${cases[@]}"; do
  read -r file entry syms_list <<<"$case"
  name="$(basename "$file" .rlx)-$entry"
  syms=()
  for s in $syms_list; do syms+=(--sym "$s"); done
  "$bin/relax-translate" "$file" --emit=lib --target aarch64-linux-gnu -o "$out/$name-aarch64.so"
  rm -rf "$out/$name-interp" "$out/$name-qemu"
  "$bin/relax-run" "$file" --entry "$entry" --seed 1 "${syms[@]}" --output-dir "$out/$name-interp"
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$run_library" "$out/$name-aarch64.so" --entry "$entry" --seed 1 \
    "${syms[@]}" --output-dir "$out/$name-qemu"
  /usr/bin/python3 - "$out/$name-interp" "$out/$name-qemu" "$name" <<'PY'
import os, sys, numpy as np
want_dir, got_dir, name = sys.argv[1:]
files = sorted(os.listdir(want_dir))
assert files and files == sorted(os.listdir(got_dir)), (files, os.listdir(got_dir))
for f in files:
    a, b = np.load(os.path.join(want_dir, f)), np.load(os.path.join(got_dir, f))
    if a.shape != b.shape or a.dtype != b.dtype or not np.allclose(a, b, rtol=1e-5, atol=1e-6):
        sys.exit(f"test-cross: {name}: {f} differs from the interpreter's on aarch64")
print(f"test-cross: {name}: the aarch64 library under qemu gives the interpreter's numbers ({len(files)} results)")
PY
done
