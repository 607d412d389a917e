#!/usr/bin/env bash
# Session 26, GPU call 3 (build-s26 carried: vendor.tgz,
# quantize-formats.qfa.xz, wide3/ from `MODE=kernel TOP=6 BATCHES=128,256
# SHAPES=<Qwen2.5-1.5B, Qwen2.5-7B and Llama-3-8B projections>
# bench/pipeline-depth/make-sweep.py`):
#  1. the GPU tests of the conversion kernels after DeviceWiden and
#     DeviceHalfRound moved onto ElementwiseKernel;
#  2. which kernel (mma.sync or wgmma) at batches 128 and 256, on training
#     shapes of 256 to 14336 rows (placeholder weights: a tiling sweep).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r3.tgz" -C /tmp r3; }
r=build-s26; b=/tmp/qb
tar xzf $r/vendor.tgz; xz -dkf $r/quantize-formats.qfa.xz
tar xJf $r/wide3/artifacts.tar.xz -C $r/wide3
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$r/quantize-formats.qfa timeout 120 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='DeviceWidenGpuTest.*:DeviceHalfRoundGpuTest.*:OddWidth*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log | head -20; pack
log sweep
QFUSE_BENCH=$b/bin/qfuse-bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh $r/wide3 400 2>&1 | tail -20
rm -f $out/zoo.tgz; pack; log done
