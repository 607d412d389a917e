#!/usr/bin/env bash
# Prepared in session 42 for the device call after next.sh. Carry
# ["build-s61", "build-s62"] (git-ignored). The compiler of a5b2f39 made:
# 1. build-s61/steps: the Llama-3-8B step, int4-g128 and NF4 at batches 1,
#    16, 64, 128, as prof.sh's part 1 made it (decode_step_ir.py
#    --full-step --as-model, qfuse-compile --chip=sm_90a), against cuBLAS
#    fp16's GEMMs in one process;
# 2. build-s61/sparse: a GPU check of the cluster exchange in 2:4 kernels,
#    which no GPU ran since session 42 changed it (qfuse-sim does not show
#    its race): test/Tools/qfuse-compile/Inputs/sparse24-formats.mlir at
#    --batch-sizes=1,3,8,9,16,17,32,64,100 (30 cluster launches) and with
#    --qf-mma-sp-meta-per-tile=false at 9,16,64,128 (18), and
#    mma-cluster.mlir at 3,9,16,17,32,64,100 (21), all --chip=sm_90a, xz;
# 3. build-s62/ab: the clean A/B of the one-wave rule (docs/tensor-core.md,
#    "Registers of one-wave grids"): OLD a5b2f39 with
#    getTensorCoreResidentBlocks returning 0, NEW a5b2f39, on the 247 of
#    312 sampled zoo cells whose registers it changes
#    (next/minncta-registers.json, minncta/registers.py), made by
#      python3 bench/cost-model/make-zoo-ab.py OLD NEW \
#        bench/results/2026-12-06-s42/next/minncta-changes.json build-s62/ab --chip sm_90a
#    its pairs in a random order, as many as the budget reaches.
# Every plan checked. Run as  BUDGET=<s for the A/B> bash bench/results/2026-12-06-s42/next2.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"; res=/tmp/s43two; rm -rf $res; mkdir -p $res $out
pack() { tar czf $out/two.tgz -C /tmp s43two; }
tar xzf build-s61/vendor.tgz
b=build-gpu
if [ ! -x $b/bin/qfuse-bench ]; then
  { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 ||
    { tail -30 $res/build.log; pack; exit 1; }
fi
nvidia-smi -L > $res/gpu.txt
for enc in int4-g128 nf4; do
  for m in 1 16 64 128; do
    n=l8b-$enc-b$m
    timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m \
      --artifact build-s61/steps/$n.qfa --placeholder-weights \
      --json $res/$n.json > $res/$n.log 2>&1
    echo "step $n rc=$?"
  done
done
for f in build-s61/sparse/*.qfa.xz; do
  n=$(basename $f .qfa.xz); xz -dkc $f > /tmp/$n.qfa
  timeout 120 $b/bin/qfuse-bench --artifact /tmp/$n.qfa --check-only > $res/check-$n.log 2>&1
  echo "check $n rc=$? ok=$(grep -c ' ok$' $res/check-$n.log) fail=$(grep -c FAIL $res/check-$n.log)"
done
pack
QFUSE_BENCH=$b/bin/qfuse-bench ZOO_WORK=/tmp/s43ab bash bench/zoo/run-zoo.sh build-s62/ab "${BUDGET:-360}" | tail -4
mv "$out/zoo.tgz" "$out/minncta-ab.tgz"
