#!/usr/bin/env bash
# Session 24, GPU call 2 (build-s24b carried: vendor.tgz, arts.tar.xz made by
# make-round2.sh beside this file). Issue 19: static groups fitted on the
# device, act-order's moves as copy batches (branch gptq-device-fits):
#  - GPU tests: GptqDeviceWeightsGpu (device fits against the host's),
#    GptqActOrderGpu, and the other four suites of the pipeline;
#  - the tiny Llama: qfuse-quantize device vs --host-weights, byte-identical
#    (f16; static groups; act-order + static groups);
#  - Llama-3-8B-shaped random fp16 checkpoint, int4-g128, 8 x 256: plain,
#    static groups, act-order + static groups (wall time).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r2; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r2.tgz" -C /tmp r2; }
r=build-s24b; b=/tmp/qb; A=/tmp/a
log build
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/arts.tar.xz -C $A
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-quantize qfuse-synthetic-model qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$A/rtn/quantize-formats.qfa QFUSE_CALIBRATION_QFA=$A/tiny/tiny-llama-fp16.qfa QFUSE_GPTQ_ARTIFACTS=$A/gptq \
  timeout 200 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='GptqActOrderGpu.*:GptqDeviceWeightsGpu.*:DeviceHalfRoundGpuTest.*:BackgroundLoadGpu.*:QuantizeGpu*:DeviceGather*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log | head -20; pack
log "tiny Llama: device vs --host-weights"
t=/tmp/tiny; rm -rf $t; mkdir -p $t
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/m --seed 1 --dtype f16 > /dev/null; cp $A/tiny/qfuse-*.qfa $t/m/
for name in f16 st ao; do
  extra=$(case $name in st) echo --static-groups;; ao) echo "--act-order --static-groups";; esac)
  for mode in device host; do
    h=$([ $mode = host ] && echo --host-weights || true)
    timeout 60 $b/bin/qfuse-quantize --model $t/m --encoding int4-g128 --calibration random:64 --seq-len 128 \
      --out $t/$name-$mode $h $extra --json $res/tiny-$name-$mode.json > $res/tiny-$name-$mode.log 2>&1 || echo "tiny $name $mode rc=$?"
  done
  cmp -s $t/$name-device/model.safetensors $t/$name-host/model.safetensors && echo "tiny $name: IDENTICAL" || echo "tiny $name: DIFFER"
done; pack
log "Llama-3-8B checkpoint (fp16)"
m=/tmp/l8b
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/rtn/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
q() { # name samples seq calib
  local name=$1 n=$2 s=$3 c=$4; rm -rf /tmp/q-$name
  timeout ${T:-150} /usr/bin/time -v -o $res/$name.time $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:$n --seq-len $s --fp16-artifact $c --out /tmp/q-$name --json $res/$name.json $QARGS > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}')"
}
C256=$A/rtn/llama3-8b/qfuse-fp16-calib-256.qfa
QARGS= q f1 8 256 $C256; rm -rf /tmp/q-f1; pack
QARGS="--static-groups" q st 8 256 $C256; rm -rf /tmp/q-st; pack
QARGS="--act-order --static-groups" q ao 8 256 $C256; rm -rf /tmp/q-ao; pack
QARGS="--act-order --static-groups" q ao2 8 256 $C256; rm -rf /tmp/q-ao2; pack
log done
