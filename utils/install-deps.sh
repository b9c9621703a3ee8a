#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, if any are missing.
# Safe to run repeatedly: it does nothing when everything is present.
set -euo pipefail
packages=(llvm-19-dev libpolly-19-dev libzstd-dev zlib1g-dev libffi-dev llvm-19-tools spirv-tools python3 python3-numpy python3-yaml python3-pip mesa-vulkan-drivers libvulkan1 qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# NVIDIA's PTX assembler, for the PTX tests (optional; see utils/fetch-ptxas.py).
python3 "$(dirname "$0")/fetch-ptxas.py" "${RELAX_TOOLS_DIR:-$HOME/.cache/relax-tools}/ptxas"
# llama.cpp's Python GGUF package, for relax-gguf's comparison test (optional: without a
# network or pip the test says it is skipped). Pure Python; numpy and yaml come from Debian.
gguf_py="${RELAX_TOOLS_DIR:-$HOME/.cache/relax-tools}/python"
if [[ ! -f "$gguf_py/gguf/__init__.py" ]]; then
  /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    --no-deps --target "$gguf_py" gguf==0.19.0 >/dev/null 2>&1 ||
    echo "install-deps: could not install gguf-py with pip; the GGUF comparison test will be skipped" >&2
fi
# Rust's aarch64 standard library, for the cross-compiled runtime of the qemu test
# (utils/test-cross.sh; without a network it says it is skipped).
if command -v rustup >/dev/null && ! rustup target list --installed 2>/dev/null | grep -q '^aarch64-unknown-linux-gnu$'; then
  rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1 ||
    echo "install-deps: could not add the aarch64 Rust target; the qemu test will be skipped" >&2
fi
