#!/usr/bin/env bash
# The main demo (README, docs/llama.md): the Llama-style decoder of examples/llama/ compiled
# by relax-opt (legalization, fusion, CPU schedules, memory planning), then 32 tokens
# generated on the JIT with relax-run (prefill, then decode steps that feed the KV cache
# back), checked against the numpy reference; then a model of real size from a GGUF file
# (TinyLlama-1.1B's configuration with random Q4_0 weights, generated once into
# ${RELAX_TOOLS_DIR:-~/.cache/relax-tools}/llm-models/) generates a few tokens from a text
# prompt, with relax's tokens per second and, when llama-bench is installed (utils/bench/
# llm.py builds it), llama.cpp's on the same file beside them. Installs what is missing,
# builds in release mode. Scratch files go to target/llama-demo/.
# DEMO_LLM_TOKENS=N sets the new tokens of the GGUF step (default 32); DEMO_LLM_TOKENS=0
# skips that step.
set -euo pipefail
cd "$(dirname "$0")/.."
utils/install-deps.sh
echo "== building relax-opt, relax-run and relax-gguf (release)"
cargo build --release --quiet -p relax-opt -p relax-run -p relax-gguf-tool
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


# 4. A model of real size from a GGUF file (docs/llm.md, "Figures", has the benchmark).
n_llm="${DEMO_LLM_TOKENS:-32}"
[[ "$n_llm" =~ ^[0-9]+$ ]] || { echo "demo: DEMO_LLM_TOKENS must be a number of tokens, not '$n_llm'" >&2; exit 1; }
((n_llm > 0)) || exit 0
tools="${RELAX_TOOLS_DIR:-$HOME/.cache/relax-tools}"
gguf="$tools/llm-models/tinyllama-q4_0-seed0.gguf"
threads=$(nproc)
echo
echo "== 4. a real-size model: TinyLlama-1.1B's configuration (22 layers, hidden 2048), random Q4_0 weights"
if [[ ! -f "$gguf" ]]; then
  mkdir -p "$(dirname "$gguf")"
  echo "relax-gguf gen --preset tinyllama --type q4_0 --seed 0 -o $gguf (once; about a minute)"
  "$bin/relax-gguf" gen --preset tinyllama --type q4_0 --seed 0 -o "$gguf.tmp"
  mv "$gguf.tmp" "$gguf"
fi
echo "$gguf: $(( $(stat -c %s "$gguf") / 1000000 )) MB"
text="Once upon a time"
echo "relax-run $gguf --generate --prompt-text \"$text\" --max-new-tokens $n_llm --ignore-eos"
"$bin/relax-run" "$gguf" --generate --prompt-text "$text" --max-new-tokens "$n_llm" --ignore-eos \
  > "$out/llm-text.txt" 2> "$out/llm-log.txt" || { cat "$out/llm-log.txt" >&2; exit 1; }
echo "generated text (random weights, so not words): $(tr '\n' ' ' < "$out/llm-text.txt")"
# relax-run's report lines, "prefill: N prompt tokens in T ms (...)" and "decode: N tokens in
# T ms (...)": tokens/s from N and T (the lines round the rate to one decimal).
rate() { awk -v n="$1" -v ms="$2" 'BEGIN { if (n == "" || ms == "") print "-"; else printf "%.3g", n * 1000 / ms }'; }
prompt_n=$(sed -n 's/.*prefill: \([0-9]*\) prompt tokens in \([0-9.]*\) ms.*/\1/p' "$out/llm-log.txt")
prefill_ms=$(sed -n 's/.*prefill: [0-9]* prompt tokens in \([0-9.]*\) ms.*/\1/p' "$out/llm-log.txt")
decode_n=$(sed -n 's/.*decode: \([0-9]*\) tokens in [0-9.]* ms.*/\1/p' "$out/llm-log.txt")
decode_ms=$(sed -n 's/.*decode: [0-9]* tokens in \([0-9.]*\) ms.*/\1/p' "$out/llm-log.txt")
printf "relax:     prefill %8s tokens/s (%s prompt tokens), decode %8s tokens/s (%s steps), %s threads\n" \
  "$(rate "$prompt_n" "$prefill_ms")" "${prompt_n:-?}" "$(rate "$decode_n" "$decode_ms")" "${decode_n:-0}" "$threads"
bench=$(ls "$tools"/llama.cpp/build-*/bin/llama-bench 2>/dev/null | tail -1 || true)
[[ -n "$bench" ]] || bench=$(command -v llama-bench || true)
if [[ -z "$bench" ]]; then
  echo "llama.cpp: no llama-bench (python3 utils/bench/llm.py --quick builds it), so no comparison"
  exit 0
fi
"$bench" -m "$gguf" -t "$threads" -r 1 -p "${prompt_n:-5}" -n 16 -o json > "$out/llama-bench.json" 2> "$out/llama-bench.log" \
  || { echo "llama.cpp: $bench failed:" >&2; tail -5 "$out/llama-bench.log" >&2; exit 1; }
"$py" -c 'import json, sys
rows = {("pp" if r["n_gen"] == 0 else "tg"): r for r in json.load(open(sys.argv[1]))}
pp_ts, pp_n = rows["pp"]["avg_ts"], rows["pp"]["n_prompt"]
tg_ts, tg_n, threads = rows["tg"]["avg_ts"], rows["tg"]["n_gen"], rows["tg"]["n_threads"]
print(f"llama.cpp: prefill {pp_ts:8.1f} tokens/s ({pp_n} prompt tokens), "
      f"decode {tg_ts:8.1f} tokens/s ({tg_n} tokens), {threads} threads  ({sys.argv[2]})")' \
  "$out/llama-bench.json" "$bench"
