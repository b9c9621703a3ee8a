#!/usr/bin/env bash
# The main job on a shipped example: builds the tools and runs relax-opt on
# examples/mlp.rlx, cleaning up copies and dead code, printing the result.
set -euo pipefail
cd "$(dirname "$0")/.."
utils/install-deps.sh
cargo build --release --quiet --bins
echo "== input: examples/mlp.rlx"
echo "== relax-opt examples/mlp.rlx --canonicalize-bindings --dead-code-elimination"
target/release/relax-opt examples/mlp.rlx --canonicalize-bindings --dead-code-elimination
