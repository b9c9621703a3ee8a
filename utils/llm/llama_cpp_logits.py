#!/usr/bin/env python3
"""Greedy generation and logits of a GGUF model with llama.cpp (llama-cpp-python), the
peer side of relax's logits check (lib/relax-driver/tests/llm_llama_cpp.rs, docs/llm.md).

    llama_cpp_logits.py MODEL.gguf (--prompt 1,2,3 | --prompt-text TEXT) --max-new-tokens N
                        [--logits-out L.npy] [--force IDS] [--threads T] [--kv-type f32|f16]
    llama_cpp_logits.py MODEL.gguf --tokenize < SENTENCES.json

Loads the file with `llama_cpp.Llama` (CPU, `logits_all=True`, a float32 KV cache by
default: `type_k = type_v = GGML_TYPE_F32`, flash attention off, context = prompt + N),
evaluates the prompt and greedy-generates N tokens (the argmax of each row, the first
index on ties, as relax-run does). Output, as `relax-run --generate` writes it: the new
token ids on stdout, comma-separated; with `--logits-out`, an (N, vocab) float32 `.npy`
whose row i holds the logits token i was chosen from (row 0: the last prompt position).

`--force IDS` (N comma-separated ids) feeds those tokens instead of llama.cpp's own
choices (teacher forcing), so that the logits of a quantized model, whose greedy path
may part from relax's at a near tie, are still compared on the same sequence; stdout
then holds llama.cpp's own argmax of each row. One line on stderr gives the versions.

`--prompt-text TEXT` tokenizes the prompt with llama.cpp (`Llama.tokenize(text,
add_bos=True, special=False)`: `llama_tokenize` with `add_special` and without
`parse_special`, as `relax-run --prompt-text` does) and prints its ids on a second
stdout line, `prompt: 1,2,3`. `--tokenize` loads the vocabulary only and tokenizes each
string of the JSON list on stdin the same way: one line of comma-separated ids each.

Needs a python with llama-cpp-python (which brings numpy); prints
`skipped: no llama_cpp (...)` on stderr and exits with status 3 when it has none.
"""
import argparse
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--prompt", help="token ids, comma-separated")
    ap.add_argument("--prompt-text", help="the prompt as text, tokenized by llama.cpp")
    ap.add_argument("--tokenize", action="store_true", help="tokenize the JSON list of strings on stdin")
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--logits-out")
    ap.add_argument("--force", help="feed these ids (one per new token) instead of the argmax")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--kv-type", choices=["f32", "f16"], default="f32")
    args = ap.parse_args()
    try:
        import llama_cpp
        import numpy as np
    except ImportError as e:
        print(f"skipped: no llama_cpp or numpy in {sys.executable} ({e})", file=sys.stderr)
        sys.exit(3)

    if args.tokenize:
        import json

        sentences = json.load(sys.stdin)
        vocab = llama_cpp.Llama(model_path=args.model, vocab_only=True, verbose=False)
        for text in sentences:
            print(",".join(map(str, vocab.tokenize(text.encode("utf-8"), add_bos=True, special=False))))
        return
    if (args.prompt is None) == (args.prompt_text is None):
        sys.exit("llama_cpp_logits.py: error: give --prompt IDS or --prompt-text TEXT (or --tokenize)")
    if args.prompt is not None:
        prompt = [int(t) for t in args.prompt.split(",") if t.strip()]
    else:
        vocab = llama_cpp.Llama(model_path=args.model, vocab_only=True, verbose=False)
        prompt = vocab.tokenize(args.prompt_text.encode("utf-8"), add_bos=True, special=False)
        del vocab
    n = args.max_new_tokens
    if not prompt or n < 1:
        sys.exit("llama_cpp_logits.py: error: an empty prompt or --max-new-tokens below 1")
    forced = [int(t) for t in args.force.split(",")] if args.force else None
    if forced is not None and len(forced) != n:
        sys.exit(f"llama_cpp_logits.py: error: --force has {len(forced)} ids, --max-new-tokens is {n}")
    kv = llama_cpp.GGML_TYPE_F32 if args.kv_type == "f32" else llama_cpp.GGML_TYPE_F16
    llm = llama_cpp.Llama(
        model_path=args.model,
        n_ctx=len(prompt) + n,
        n_batch=max(len(prompt), 1),
        n_ubatch=max(len(prompt), 1),
        n_threads=args.threads,
        n_threads_batch=args.threads,
        n_gpu_layers=0,
        logits_all=True,
        flash_attn=False,
        type_k=kv,
        type_v=kv,
        seed=0,
        verbose=False,
    )
    n_vocab = llm.n_vocab()
    if max(prompt) >= n_vocab:
        sys.exit(f"llama_cpp_logits.py: error: a prompt id is outside the vocabulary of {n_vocab}")
    rows, own = [], []
    llm.eval(prompt)
    for i in range(n):
        row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32, copy=True)
        rows.append(row)
        tok = int(np.argmax(row))
        own.append(tok)
        if i + 1 < n:
            llm.eval([forced[i] if forced is not None else tok])
    print(",".join(map(str, own)))
    if args.prompt_text is not None:
        print("prompt: " + ",".join(map(str, prompt)))
    if args.logits_out:
        np.save(args.logits_out, np.stack(rows))
    print(f"llama-cpp-python {llama_cpp.__version__}, numpy {np.__version__}, KV cache {args.kv_type}, "
          f"flash attention off, {args.threads} threads", file=sys.stderr)


if __name__ == "__main__":
    main()
