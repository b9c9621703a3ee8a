#!/usr/bin/env python3
"""Fetches NVIDIA's PTX assembler `ptxas` for the PTX tests, if it is not there yet.

`ptxas` runs on any x86-64 Linux machine, GPU or not; it comes from PyPI's
`nvidia-cuda-nvcc-cu12` wheel (downloaded with `pip download`, never installed), of which
only `bin/ptxas` is kept, in the directory given as the first argument. The download is
optional: without a network or pip, the tests' `%if ptxas` lines are skipped and the
reason is printed here.
"""

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "nvidia-cuda-nvcc-cu12==12.9.86"
MEMBER = "nvidia/cuda_nvcc/bin/ptxas"


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: fetch-ptxas.py DIR", file=sys.stderr)
        return 2
    target = os.path.join(sys.argv[1], "ptxas")
    if os.access(target, os.X_OK):
        return 0
    os.makedirs(sys.argv[1], exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--platform", "manylinux2014_x86_64", "-d", tmp, PACKAGE]
        got = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if got.returncode != 0 or not wheels:
            reason = got.stderr.strip().splitlines()[-1:] or ["no wheel"]
            print(f"note: ptxas not fetched ({reason[0]}); PTX tests skip ptxas", file=sys.stderr)
            return 0
        with zipfile.ZipFile(os.path.join(tmp, wheels[0])) as whl:
            data = whl.read(MEMBER)
        partial = target + ".part"
        with open(partial, "wb") as f:
            f.write(data)
        os.chmod(partial, 0o755)
        os.replace(partial, target)
        digest = hashlib.sha256(data).hexdigest()[:16]
        print(f"fetched ptxas ({PACKAGE}, sha256 {digest}...) into {sys.argv[1]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
