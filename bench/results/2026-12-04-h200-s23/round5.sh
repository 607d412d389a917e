#!/usr/bin/env bash
# Session 23, GPU call 5 (build-s23e carried: vendor.tgz, a.tar.xz = the GPTQ
# test artifacts, the tiny Llama's artifacts and quantize-formats.qfa, all
# compiled at the commit in build-s23e/COMMIT with the final defaults:
# griddepcontrol.wait only). The final tree's GPU tests (the GPTQ tests'
# shared helpers moved), the tiny Llama through qfuse-quantize (device vs
# --host-weights, f16 and act-order) and qfuse-model-check, with PDL on
# (default) and off.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r5; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r5.tgz" -C /tmp r5; }
r=build-s23e; b=/tmp/qb; A=/tmp/a5
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/a.tar.xz -C $A; A=$A/a
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-quantize qfuse-model-check qfuse-synthetic-model qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$A/quantize-formats.qfa QFUSE_CALIBRATION_QFA=$A/tiny/tiny-llama-fp16.qfa QFUSE_GPTQ_ARTIFACTS=$A/gptq \
  timeout 200 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='GptqActOrderGpu.*:GptqDeviceWeightsGpu.*:DeviceHalfRoundGpuTest.*:BackgroundLoadGpu.*:QuantizeGpu*:DeviceGather*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log | head -20; pack
t=/tmp/tiny; rm -rf $t; mkdir -p $t
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/m --seed 1 --dtype f16 > /dev/null; cp $A/tiny/qfuse-*.qfa $t/m/
for p in 1 0; do
  QFUSE_PDL=$p timeout 60 $b/bin/qfuse-model-check --model $t/m --artifact $t/m/qfuse-int4-g128.qfa --prompt-ids 1,2,3 --steps 16 > $res/model-check-pdl$p.log 2>&1 \
    && echo "model-check int4 PDL=$p: ok" || { echo "model-check PDL=$p: FAILED"; tail -5 $res/model-check-pdl$p.log; }
done
for name in plain ao; do
  extra=$([ $name = ao ] && echo "--act-order --static-groups" || true)
  for mode in device host; do
    h=$([ $mode = host ] && echo --host-weights || true)
    timeout 60 $b/bin/qfuse-quantize --model $t/m --encoding int4-g128 --calibration random:64 --seq-len 128 \
      --out $t/$name-$mode $h $extra --json $res/tiny-$name-$mode.json > $res/tiny-$name-$mode.log 2>&1 || echo "tiny $name $mode rc=$?"
  done
  cmp -s $t/$name-device/model.safetensors $t/$name-host/model.safetensors && echo "tiny $name: IDENTICAL" || echo "tiny $name: DIFFER"
done
pack; log done
