#!/usr/bin/env bash
# Session 24, GPU call 6 (build-s24d carried, call 5's artifacts): the GPTQ
# device-weights GPU tests again after their rows of zero extremes went to
# +0 only (the device's f32 widening turns -0 into +0, docs/gptq.md).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r6; rm -rf $res; mkdir -p $res
r=build-s24d; b=/tmp/qb; A=/tmp/a
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/arts.tar.xz -C $A
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 || { tail -30 $res/build.log; exit 1; }
QFUSE_GPTQ_ARTIFACTS=$A/gptq timeout 60 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='GptqDeviceWeightsGpu.*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log
tar czf "$out/r6.tgz" -C /tmp r6
