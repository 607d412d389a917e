#!/usr/bin/env bash
# Session 38's zoo round of main (the round of record for issue 18): the
# way a user compiles, no tuning database,
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build \
#     bench/zoo/plan.json build-s41/zoo
# split in two by run list lines (1-33 -> build-s41a, 34-65 -> build-s41b,
# artifacts recompressed as artifacts.tar.xz; the last nine lines,
# s3584x4096, dropped: a round's budget has never reached them).
# First the Llama-3-8B int4-g128 decode step as a model wires it, the default
# compile for an H100/H200 (build-s43/steps, made by
#   for b in 1 16 64 128; do python3 bench/decode_step_ir.py --model llama3-8b \
#     --encoding int4-g128 --batch $b --full-step --as-model -o s.mlir &&
#     build/bin/qfuse-compile --chip=sm_90a s.mlir -o l8b-model-b$b.qfa; done
# placeholder codes, timed against cuBLAS fp16 on the same shapes).
# Carry ["build-s41a", "build-s41b", "build-s43"].
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s38/r2.sh  (a: 55%, b: the rest)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
budget=${BUDGET:-540}
t0=$(date +%s) # the budget counts from here, the build included
tar xzf build-s41a/vendor.tgz
steps=/tmp/s38-steps; rm -rf $steps; mkdir -p $steps
cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF \
  -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $steps/build.log 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target qfuse-bench >> $steps/build.log 2>&1 ||
  { tail -20 $steps/build.log; exit 1; }
nvidia-smi -L > $steps/gpu.txt
for b in 1 16 64 128; do
  timeout 60 build-gpu/bin/qfuse-bench --model llama3-8b --batch $b \
    --artifact build-s43/steps/l8b-model-b$b.qfa --placeholder-weights \
    --json $steps/l8b-model-b$b.json > $steps/l8b-model-b$b.log 2>&1
  echo "step b$b rc=$?"; grep -iE "speedup|cublas" $steps/l8b-model-b$b.log | tail -2
done
tar czf "$out/steps.tgz" -C /tmp s38-steps
budget=$(( budget - ($(date +%s) - t0) ))
for part in a b; do
  xz -dc build-s41$part/zoo/artifacts.tar.xz | tar xf - -C build-s41$part/zoo
done
QFUSE_BENCH=build-gpu/bin/qfuse-bench ZOO_WORK=/tmp/zoo-a bash bench/zoo/run-zoo.sh build-s41a/zoo $(( budget * 55 / 100 )) | tail -4
mv "$out/zoo.tgz" "$out/zoo-a.tgz"
QFUSE_BENCH=build-gpu/bin/qfuse-bench ZOO_WORK=/tmp/zoo-b \
  bash bench/zoo/run-zoo.sh build-s41b/zoo $(( budget * 45 / 100 - 5 )) | tail -4
mv "$out/zoo.tgz" "$out/zoo-b.tgz"
