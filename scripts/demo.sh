#!/usr/bin/env bash
# The main job, for now: run qfuse-opt over the example layers in examples/
# and show the canonical IR. Later issues grow this into compiling and running
# the layers on the GPU.
set -euo pipefail
build="${1:-build}"
opt="$build/bin/qfuse-opt"
for f in examples/*.mlir; do
  echo "=== $f"
  "$opt" "$f" --qf-import-quant --canonicalize --mlir-print-local-scope=false
done
