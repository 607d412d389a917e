#!/usr/bin/env bash
# Session 24, GPU call 3 (build-s24c carried: vendor.tgz, steps.tar.xz): the
# Llama-3-8B int4-g128 step as a model wires it (sm_90a) at batches 8-64,
# compiled the default way (base) and with the shipped tuning database
# (tuned: --tuning-db=bench/tuning-db.json, whose entries were measured on
# these shapes), in one process per batch; then Nsight Compute on the first
# four tensor-core launches of the default batch-16 step (q/k/v, o, gate/up,
# down of layer 0): a profile, not a result of record.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r3.tgz" -C /tmp r3; }
r=build-s24c; b=/tmp/qb; s=/tmp/steps
tar xzf $r/vendor.tgz; rm -rf $s; mkdir -p $s; tar xJf $r/steps.tar.xz -C $s
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
for m in 8 16 32 64; do
  timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m --artifact $s/base-b$m.qfa --artifact $s/tuned-b$m.qfa \
    --placeholder-weights --json $res/b$m.json > $res/b$m.log 2>&1
  echo "b$m rc=$? $(grep -E '^(cublas|plan)' $res/b$m.log | awk '{print $2, $(NF-4)}' | tr '\n' ' ')"
done; pack
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for v in base tuned; do
  timeout 150 "$ncu" -k regex:qf_mma -c 4 --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    $b/bin/qfuse-bench --artifact $s/$v-b16.qfa --batch 16 --placeholder-weights --iterations 1 --warmup 0 > $res/ncu-$v-b16.txt 2>&1
  echo "ncu $v rc=$?"; grep -E "^  qf_|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Block Limit" $res/ncu-$v-b16.txt | head -40
done
pack; log done
