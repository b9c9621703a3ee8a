#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, if any are missing.
# Safe to run repeatedly: it does nothing when everything is present.
set -euo pipefail
packages=(llvm-19-dev libpolly-19-dev libzstd-dev zlib1g-dev libffi-dev llvm-19-tools spirv-tools python3 python3-numpy mesa-vulkan-drivers libvulkan1)
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
