#!/usr/bin/env bash
# Llama-3-8B int4-g128 whole linear step, compiled the Python way's sm_90a variant
# (no tuning db, default fuse): gated (silu_mul) and plain at batches 1,16,64,128.
set -euo pipefail
out=build-s23/steps
for b in 1 16 64 128; do
  for g in gated plain; do
    flag=""; [ $g = gated ] && flag=--gated
    python3 bench/decode_step_ir.py --model llama3-8b --encoding int4-g128 --batch $b --full-step $flag -o $out/l8b-$g-b$b.mlir
    build/bin/qfuse-compile --chip=sm_90a $out/l8b-$g-b$b.mlir -o $out/l8b-$g-b$b.qfa 2> $out/l8b-$g-b$b.log
    rm $out/l8b-$g-b$b.mlir
  done
done
echo steps-done
