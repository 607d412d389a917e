#!/usr/bin/env bash
# Installs the Debian packages qfuse needs. Idempotent: installs only what is
# missing, runs `apt-get update` at most once, and says what it did.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make lld                            # lld: faster links
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools   # compiler + lit/FileCheck
  libgtest-dev                                              # C++ unit tests
  nlohmann-json3-dev libcli11-dev                           # runtime (no LLVM there)
  python3 python3-numpy python3-pytest python3-jinja2       # Python frontend + tests; chat oracle
  clang-14 libclang-rt-14-dev                   # sanitize build + libFuzzer (test-sanitize, test-fuzz)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$pkg")
  fi
done

# The tokenizer oracle tests run Hugging Face's JavaScript tokenizers (npm).
command -v npm >/dev/null || missing+=(nodejs npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
