"""Tokenizes test sentences with llama.cpp (through llama-cpp-python) for the
comparison test in ../llama_cpp.rs.

usage: llama_cpp_tokenize.py VOCAB.gguf INPUTS

INPUTS holds one sentence per line, hex-encoded UTF-8. The output has one line per
result:
  T <sentence> <add_special> <parse_special> <ids...>   llama_tokenize
  D <sentence> <remove_special> <unparse_special> <hex> llama_detokenize of the ids of
                                                        add_special=1 parse_special=1
  P <id> <special> <hex>                                llama_token_to_piece
Exits with 77 when llama-cpp-python is not installed.
"""

import ctypes
import sys

try:
    import llama_cpp
except ImportError:
    sys.exit(77)


def detokenize(vocab, ids, remove_special, unparse_special):
    arr = (llama_cpp.llama_token * len(ids))(*ids)
    size = 64 + 16 * len(ids)
    while True:
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, size, remove_special, unparse_special)
        if n >= 0:
            return buf.raw[:n]
        size = -n + 1


def piece(vocab, token, special):
    size = 64
    while True:
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_token_to_piece(vocab, token, buf, size, 0, special)
        if n >= 0:
            return buf.raw[:n]
        size = -n + 1


def main():
    gguf, inputs = sys.argv[1], sys.argv[2]
    llama = llama_cpp.Llama(model_path=gguf, vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    out = []
    with open(inputs) as f:
        sentences = [bytes.fromhex(line.strip()) for line in f]
    for i, text in enumerate(sentences):
        for add_special in (0, 1):
            for parse_special in (0, 1):
                ids = llama.tokenize(text, add_bos=bool(add_special), special=bool(parse_special))
                out.append(f"T {i} {add_special} {parse_special} " + " ".join(map(str, ids)))
        ids = llama.tokenize(text, add_bos=True, special=True)
        for remove_special in (0, 1):
            for unparse_special in (0, 1):
                text_out = detokenize(vocab, ids, bool(remove_special), bool(unparse_special))
                out.append(f"D {i} {remove_special} {unparse_special} {text_out.hex()}")
    for token in range(llama_cpp.llama_vocab_n_tokens(vocab)):
        for special in (0, 1):
            out.append(f"P {token} {special} {piece(vocab, token, bool(special)).hex()}")
    sys.stdout.write("\n".join(out) + "\n")


main()
