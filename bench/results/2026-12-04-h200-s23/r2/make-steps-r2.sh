#!/usr/bin/env bash
# Llama-3-8B int4-g128 step as a model wires it (decode_step_ir.py --full-step
# --as-model), --chip=sm_90a, no tuning db: default fusions at 1-256, and
# without gated-mlp ("nogate": --fuse=epilogue,act-order-norm,rotary-attention,
# what default is from batch 32 less gated-mlp) at 64-256.
set -euo pipefail
out=build-s23b/steps
for b in 1 16 64 128 256; do
  python3 bench/decode_step_ir.py --model llama3-8b --encoding int4-g128 --batch $b --full-step --as-model -o $out/s.mlir
  build/bin/qfuse-compile --chip=sm_90a $out/s.mlir -o $out/l8b-model-b$b.qfa 2> $out/l8b-model-b$b.log
  if [ $b -ge 64 ]; then
    build/bin/qfuse-compile --chip=sm_90a --fuse=epilogue,act-order-norm,rotary-attention $out/s.mlir -o $out/l8b-nogate-b$b.qfa 2> $out/l8b-nogate-b$b.log
  fi
done
rm $out/s.mlir
echo steps-done
