#!/usr/bin/env bash
# Session 40, device call 5: the Llama-3-8B NF4 decode step (training
# model) as a model wires it, compiled the default way for an H100/H200
# by the compiler of 77b44f5 (old) and of 74eb9f1 (r1), timed against
# cuBLAS fp16 on the same shapes (placeholder codes). Carry ["build-s49"]:
#   for b in 4 3; do python3 bench/decode_step_ir.py --model llama3-8b \
#     --encoding nf4 --batch $b --full-step --as-model -o s.mlir
#     for c in old r1; do qfuse-compile-$c --chip=sm_90a s.mlir \
#       -o build-s49/l8b-nf4-b$b-$c.qfa; done; done
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
res=/tmp/s40steps; rm -rf $res; mkdir -p $res
tar xzf build-s49/vendor.tgz
cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF \
  -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $res/build.log 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target qfuse-bench >> $res/build.log 2>&1 ||
  { tail -20 $res/build.log; exit 1; }
nvidia-smi -L > $res/gpu.txt
for b in 4 3; do for c in old r1 old r1; do
  n=l8b-nf4-b$b-$c-$(date +%s%N | tail -c 4)
  timeout 60 build-gpu/bin/qfuse-bench --model llama3-8b --batch $b \
    --artifact build-s49/l8b-nf4-b$b-$c.qfa --placeholder-weights \
    --json $res/$n.json > $res/$n.log 2>&1
  echo "$n rc=$?"; grep -iE "speedup|cublas|step" $res/$n.log | tail -2
  tar czf "$out/steps.tgz" -C /tmp s40steps
done; done
