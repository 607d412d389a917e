#!/usr/bin/env bash
# Session 26, GPU call 1 (build-s26 carried: vendor.tgz, depth/ from
# bench/pipeline-depth/make-sweep.py, quantize-formats.qfa.xz):
#  1. OddWidthGatherGpuTest and the gather suites (merged from the helper's
#     branch gather-odd-widths);
#  2. the pipeline-depth sweep on training shapes (every artifact checked);
#  3. ncu profiles of three defaults (a profile, not the result of record).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r1; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r1.tgz" -C /tmp r1; }
r=build-s26; b=/tmp/qb
tar xzf $r/vendor.tgz; xz -dk $r/quantize-formats.qfa.xz
mkdir -p $r/depth/artifacts && tar xJf $r/depth/artifacts.tar.xz -C $r/depth
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$r/quantize-formats.qfa timeout 120 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='OddWidth*:DeviceGather*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log | head -20; pack
log sweep
QFUSE_BENCH=$b/bin/qfuse-bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh $r/depth 330 2>&1 | tail -40
rm -f $out/zoo.tgz; pack
log ncu
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
mkdir -p $res/ncu
while read -r name m n k; do
  timeout 60 "$ncu" -k regex:qf_ -c 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    $b/bin/qfuse-bench --artifact $r/depth/artifacts/$name.qfa --batch "$m" --gemm "${m}x${n}x${k}" \
    --iterations 10 --warmup 1 > "$res/ncu/$name.txt" 2>&1
  echo "ncu $name: rc=$? $(grep -m1 -E 'Duration' "$res/ncu/$name.txt" | tr -s ' ')"
done <<'LIST'
l8b-q-b64-default 64 4096 4096
l8b-q-b128-default 128 4096 4096
q7b-q-b128-default 128 3584 3584
l8b-down-b32-default 32 4096 14336
LIST
pack; log done
