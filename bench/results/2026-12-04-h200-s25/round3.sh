#!/usr/bin/env bash
# Session 25, GPU call 3 (build-s25c carried: vendor.tgz, arts.tar.xz made
# by make-round3.sh beside this file): the gathers of odd widths.
#  1. GPU tests: DeviceGatherGpuTest (3-, 5-, 6-, 7-bit packing and
#     act_order repacks, 3-bit mma bit planes, against format's host
#     functions), QuantizeGpuTest (5-, 6-, 7-bit codebooks' RTN kernels),
#     the widening, the GPTQ solver's device weights, act-order;
#  2. tiny Llama, 3-bit inline codebook: qfuse-quantize device (its codes
#     packed by qf_gather_fields_b3; QFUSE_PACK=check compares every module
#     with format::packCodeBytes) vs --host-weights, byte-identical;
#     qfuse-run quantize-at-load --rtn check (the codes and the mma bit
#     planes on the device against the host) and int4-g128 as before;
#  3. Llama-3-8B-shaped random fp16 checkpoint: qfuse-quantize 8 x 256 and
#     128 x 512 int4-g128 (wall), quantize-at-load int4-g128 (bound time).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r3.tgz" -C /tmp r3; }
r=build-s25c; b=/tmp/qb; A=/tmp/a
log build
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/arts.tar.xz -C $A
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-quantize qfuse-run qfuse-synthetic-model qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$A/rtn/quantize-formats.qfa QFUSE_GPTQ_ARTIFACTS=$A/gptq \
  timeout 240 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='DeviceGather*:QuantizeGpu*:DeviceWidenGpuTest.*:GptqDeviceWeightsGpu.*:GptqActOrderGpu.*:KeptValues*:DeviceHalfRoundGpuTest.*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|cases on the device|repacked" $res/unit-gpu.log | head -30; pack
log "tiny Llama: 3-bit codebook"
t=/tmp/tiny; rm -rf $t; mkdir -p $t
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/m --seed 1 --dtype f16 > /dev/null; cp $A/tiny/*.qfa $t/m/
cb3="$(cat $A/tiny/cb3.txt)"
for mode in device check host; do
  h=; env=
  case $mode in host) h=--host-weights;; check) env="QFUSE_PACK=check";; esac
  env $env timeout 90 $b/bin/qfuse-quantize --model $t/m --encoding "$cb3" --gptq-artifact $t/m/gptq-cb3.qfa \
    --decode-artifact $t/m/cb3.qfa --calibration random:64 --seq-len 128 --out $t/cb3-$mode $h \
    --json $res/tiny-cb3-$mode.json > $res/tiny-cb3-$mode.log 2>&1 || echo "cb3 $mode rc=$?"
  grep -h "codes packed\|widened" $res/tiny-cb3-$mode.log | head -2
done
cmp -s $t/cb3-device/model.safetensors $t/cb3-host/model.safetensors && echo "tiny cb3 device/host: IDENTICAL" || echo "tiny cb3 device/host: DIFFER"
cmp -s $t/cb3-device/model.safetensors $t/cb3-check/model.safetensors && echo "tiny cb3 device/check: IDENTICAL" || echo "tiny cb3 device/check: DIFFER"
for mode in check device; do
  timeout 60 $b/bin/qfuse-run --model $t/m --artifact $t/m/cb3.qfa --prompt-ids 1,2,3 --max-new-tokens 8 --rtn $mode \
    --json $res/tiny-cb3-run-$mode.json > $res/tiny-cb3-run-$mode.log 2>&1; echo "run cb3 --rtn $mode rc=$?"
  grep -hiE "quantize-at-load|repack|tokens:" $res/tiny-cb3-run-$mode.log | head -4 | cut -c1-300
done; pack
log "Llama-3-8B checkpoint (fp16)"
m=/tmp/l8b
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/rtn/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
q() { # name calibration seq-len fp16-artifact
  rm -rf /tmp/q-$1
  timeout 150 /usr/bin/time -v -o $res/$1.time $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:$2 --seq-len $3 --fp16-artifact $4 --out /tmp/q-$1 --json $res/$1.json > $res/$1.log 2>&1
  echo "$1 rc=$? wall $(grep Elapsed $res/$1.time | awk '{print $NF}')"; rm -rf /tmp/q-$1
}
q q8x256 8 256 $m/qfuse-fp16-calib-256.qfa; q q128x512 128 512 $A/calib/qfuse-fp16-calib-512.qfa; pack
timeout 120 /usr/bin/time -v -o $res/qal.time $b/bin/qfuse-run --model $m --encoding int4-g128 --rtn device --prompt-ids 1,2,3 \
  --max-new-tokens 8 --json $res/qal.json > $res/qal.log 2>&1
echo "qal rc=$? wall $(grep Elapsed $res/qal.time | awk '{print $NF}')"; grep -E "bound in|quantize-at-load" $res/qal.log | head -3 | cut -c1-250
pack; log done
