#!/usr/bin/env bash
# The main demo (README, docs/llama.md): the Llama-style decoder of examples/llama/ compiled
# by relax-opt (legalization, fusion, CPU schedules, memory planning), then 32 tokens
# generated on the JIT with relax-run (prefill, then decode steps that feed the KV cache
# back), checked against the numpy reference. Installs what is missing, builds in release
# mode. Scratch files go to target/llama-demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
utils/install-deps.sh
echo "== building relax-opt and relax-run (release)"
cargo build --release --quiet -p relax-opt -p relax-run
bin="${CARGO_TARGET_DIR:-target}/release"
out=target/llama-demo
mkdir -p "$out"

# A python with numpy: the one on PATH, else the system's (install-deps installs python3-numpy).
py=""
for p in python3 /usr/bin/python3; do
  if "$p" -c "import numpy" 2>/dev/null; then py="$p"; break; fi
done
[[ -n "$py" ]] || { echo "demo: no python3 with numpy (utils/install-deps.sh installs python3-numpy)" >&2; exit 1; }
"$py" examples/llama/make_weights.py "$out/weights" 2>/dev/null

model=examples/llama/model.rlx
passes=(--legalize-ops --annotate-tir-op-pattern --fold-constant --fuse-ops --fuse-tir
        --schedule-cpu --plan-memory --lower-alloc-tensor --kill-after-last-use)

# Counts, per Relax function, the lines of its body that call something of the module
# (`cls.`: kernels) or an op (`R.` calls other than annotations).
count_calls() {
  awk -v what="$2" '
    /^    @R\.function/ { relax = 1; next }
    /^    @T\.prim_func/ { relax = 0; next }
    /^    def / { if (relax) { fn = $2; sub(/\(.*/, "", fn) } else fn = ""; next }
    fn != "" && /^        / {
      if (what == "kernels" && /cls\./) n[fn]++
      if (what == "ops" && match($0, /= R\.[a-z_.]+\(/)) {
        op = substr($0, RSTART + 4, RLENGTH - 5)
        if (op !~ /^(shape|prim_value|const)$/) n[fn]++
      }
    }
    END { for (f in n) printf "%s %d\n", f, n[f] }' "$1" | sort
}
kernels() { grep -c "@T.prim_func" "$1" || true; }

echo
echo "== 1. compile: relax-opt $model ${passes[*]}"
"$bin/relax-opt" "$model" --legalize-ops -o "$out/legalized.rlx"
"$bin/relax-opt" "$model" "${passes[@]}" --memory-report -o "$out/model.opt.rlx" 2> "$out/memory-report.txt"
echo "kernels (PrimFuncs):  $(kernels "$out/legalized.rlx") after legalize-ops -> $(kernels "$out/model.opt.rlx") after fold-constant, fuse-ops, fuse-tir"
echo "calls per run:"
join <(count_calls "$model" ops) <(count_calls "$out/legalized.rlx" kernels) \
  | join - <(count_calls "$out/model.opt.rlx" kernels) \
  | while read -r fn ops before after; do
      printf "  %-8s %3d op calls -> %3d kernel calls after legalization -> %3d after folding and fusion\n" "$fn" "$ops" "$before" "$after"
    done
echo "memory (bytes; the symbolic size, then its value at tir_var_upper_bound):"
sed 's/^/  /' "$out/memory-report.txt"
echo "compiled module: $out/model.opt.rlx ($(wc -l < "$out/model.opt.rlx") lines)"

prompt=1,2,3
n=32
echo
echo "== 2. generate: relax-run $out/model.opt.rlx --engine jit --generate --weights-dir $out/weights --prompt $prompt --max-new-tokens $n"
"$bin/relax-run" "$out/model.opt.rlx" --engine jit --generate --weights-dir "$out/weights" \
  --prompt "$prompt" --max-new-tokens "$n" --logits-out "$out/logits.npy" > "$out/tokens.txt"
tokens=$(cat "$out/tokens.txt")
echo "tokens: $tokens"

echo
echo "== 3. check: python3 examples/llama/reference.py (numpy) on the same weights and prompt"
reference=$("$py" examples/llama/reference.py --weights-dir "$out/weights" --prompt "$prompt" \
  --max-new-tokens "$n" --logits-out "$out/reference-logits.npy")
if [[ "$tokens" != "$reference" ]]; then
  echo "MISMATCH: the numpy reference gives $reference" >&2
  exit 1
fi
"$py" -c 'import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
d = float(np.abs(a - b).max())
print(f"same {a.shape[0]} tokens as the numpy reference; logits within {d:.1e} of it (limit 1e-3)")
sys.exit(d > 1e-3)' "$out/logits.npy" "$out/reference-logits.npy"
