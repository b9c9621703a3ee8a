"""Runs examples/llama/model.rlx with TVM's default CPU build, for utils/bench/llama.py.

    TVM_PYTHON utils/bench/llama_tvm.py MODEL WEIGHTS_DIR PROMPT NEW_TOKENS RUNS

Parses the module text with ``tvm.script.from_source``, builds it with ``tvm.compile``
(``relax.build`` on releases without it) for target ``llvm`` with the default pipeline,
and runs ``prefill`` then ``decode`` steps on ``relax.VirtualMachine``, binding weights
by parameter name and feeding each step's KV cache to the next, as
``relax-run --generate`` does. Prints one JSON object: the tokens, the build seconds,
and per run the prefill seconds and the decode step seconds.
"""

import json
import os
import sys
import time

import numpy as np
import tvm
from tvm import relax


def param_names(func):
    return [getattr(p, "name_hint", None) or p.name for p in func.params]


def main():
    model, wdir, prompt, new_tokens, runs = sys.argv[1:6]
    prompt = [int(t) for t in prompt.split(",")]
    new_tokens, runs = int(new_tokens), int(runs)
    mod = tvm.script.from_source(open(model).read())
    t0 = time.perf_counter()
    ex = tvm.compile(mod, target="llvm") if hasattr(tvm, "compile") else relax.build(mod, target="llvm")
    build = time.perf_counter() - t0
    dev = tvm.cpu()
    vm = relax.VirtualMachine(ex, dev)
    to_dev = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    files = {}

    def args_of(fn, tokens, state):
        names = param_names(mod[fn])
        state = iter(state)
        out = [to_dev(np.array([tokens], dtype="int32"), dev)]
        for n in names[1:]:
            path = os.path.join(wdir, n + ".npy")
            if os.path.exists(path):
                if n not in files:
                    files[n] = to_dev(np.load(path), dev)
                out.append(files[n])
            else:
                out.append(next(state))
        return out

    def step(fn, tokens, state):
        args = args_of(fn, tokens, state)
        t0 = time.perf_counter()
        out = vm[fn](*args)
        seconds = time.perf_counter() - t0
        token = int(out[0].numpy().reshape(-1)[0])
        return token, [out[i] for i in range(2, len(out))], seconds

    results = []
    for _ in range(runs):
        token, state, prefill = step("prefill", prompt, [])
        tokens, steps = [token], []
        while len(tokens) < new_tokens:
            token, state, s = step("decode", [token], state)
            tokens.append(token)
            steps.append(s)
        results.append({"prefill": prefill, "steps": steps})
    print(json.dumps({"version": tvm.__version__, "build": build, "tokens": tokens, "runs": results}))


if __name__ == "__main__":
    main()
