#!/usr/bin/env bash
# Session 25, GPU call 4 (build-s25e carried: vendor.tgz, call 3's
# arts.tar.xz (the artifacts did not change; the runtime did), and
# llama3-8b's fp16 calibration artifact for 2048 tokens, compiled at
# 1777541 with `python3 -m qfuse emit --config examples/configs/llama3-8b.json
# --encoding fp16 --batch dynamic` and `qfuse-compile --batch-sizes=1,2048
# --chip=sm_90`):
#  1. the GPU tests of the final runtime (DeviceRepacker's perm component
#     mended after call 3), every suite of calls 1 and 3;
#  2. Llama-3-8B shapes, random fp16 on disk, int4-g128: qfuse-quantize
#     512 x 2048 (wall; LLM Compressor's example size).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r4; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r4.tgz" -C /tmp r4; }
r=build-s25e; b=/tmp/qb; A=/tmp/a
log build
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/arts.tar.xz -C $A
xz -dc $r/qfuse-fp16-calib-2048.qfa.xz > $A/calib-2048.qfa
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-quantize qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$A/rtn/quantize-formats.qfa QFUSE_GPTQ_ARTIFACTS=$A/gptq \
  timeout 240 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='DeviceGather*:QuantizeGpu*:DeviceWidenGpuTest.*:GptqDeviceWeightsGpu.*:GptqActOrderGpu.*:KeptValues*:DeviceHalfRoundGpuTest.*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|cases on the device" $res/unit-gpu.log | head -30; pack
log "Llama-3-8B checkpoint (fp16): qfuse-quantize 512 x 2048"
m=/tmp/l8b
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/rtn/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
timeout 200 /usr/bin/time -v -o $res/q512x2048.time $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
  --calibration random:512 --seq-len 2048 --fp16-artifact $A/calib-2048.qfa --out /tmp/q-s2048 --json $res/q512x2048.json > $res/q512x2048.log 2>&1
echo "q512x2048 rc=$? wall $(grep Elapsed $res/q512x2048.time | awk '{print $NF}')"
pack; log done
