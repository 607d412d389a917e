#!/usr/bin/env bash
# Session 27, GPU call 3 (build-s27 carried: vendor.tgz, ab1 as in call 2):
# Nsight Compute profiles (a profile, not the result of record) of the
# default wgmma kernel (-a) and the producer (-b) at batch 128 on two
# training shapes, with the stall reasons per issued instruction and the
# tensor pipe's activity.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3; rm -rf $res; mkdir -p $res/ncu
log() { echo "[$(date +%T)] $*"; }
pack() { tar cJf "$out/r3.txz" -C /tmp r3; }
r=build-s27; b=/tmp/qb
tar xzf $r/vendor.tgz; tar xzf $r/ab1/artifacts.tgz -C $r/ab1
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
while read -r name m n k; do
  timeout 90 "$ncu" -k regex:qf_ -c 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum' \
    $b/bin/qfuse-bench --artifact $r/ab1/artifacts/$name.qfa --batch "$m" --gemm "${m}x${n}x${k}" \
    --placeholder-weights --iterations 10 --warmup 1 > "$res/ncu/$name-b$m.txt" 2>&1
  echo "ncu $name: rc=$? $(grep -m1 -E 'Duration' "$res/ncu/$name-b$m.txt" | tr -s ' ')"
done <<'LIST'
l8b-q-a 128 4096 4096
l8b-q-b 128 4096 4096
l8b-down-a 128 4096 14336
l8b-down-b 128 4096 14336
LIST
pack
log done
