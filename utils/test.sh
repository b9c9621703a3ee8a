#!/usr/bin/env bash
# Runs every test: formatting and lints, the Rust tests (which include the in-process
# lit runner over test/), then the same test tree under LLVM's real lit and FileCheck-19.
set -euo pipefail
cd "$(dirname "$0")/.."
utils/install-deps.sh
export PATH="/usr/lib/llvm-19/bin:${RELAX_TOOLS_DIR:-$HOME/.cache/relax-tools}/ptxas:$PATH"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo test --workspace --quiet
cargo build --quiet --bins
# The PTX simulator library next to the tools (lit's `cuda-sim` feature).
cargo build --quiet -p relax-cuda-sim
export RELAX_BIN_DIR="$(realpath "${CARGO_TARGET_DIR:-target}")/debug"
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -q test/
# A compiled library and the C example on x86-64 and on aarch64 under qemu (docs/library.md).
utils/test-cross.sh
echo "all tests passed"
