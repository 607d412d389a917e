#!/usr/bin/env bash
# Session 25, GPU call 1 (build-s25a carried: vendor.tgz, arts.tar.xz and
# xover/ made by make-round1.sh beside this file):
#  1. GPU tests: the exact widening (DeviceWidenGpuTest), the GPTQ solver's
#     device weights with -0 extremes (GptqDeviceWeightsGpu), act-order,
#     quantize-at-load's kernels;
#  2. the tiny Llama: qfuse-quantize device vs --host-weights, byte-identical
#     (f16: int4-g128, static groups, act-order + static groups, int8 and
#     fp8 per channel; bf16: int4-g128, fp8 per channel);
#  3. the crossover on Qwen2.5-7B's training shapes (matvec vs tensor-core
#     kernel at batches 2-8, every plan checked, against cuBLAS fp16);
#  4. Llama-3-8B-shaped random fp16 checkpoint: qfuse-quantize 8 x 256
#     int4-g128, twice (wall time; the widening kernel in the pipeline).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r1; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r1.tgz" -C /tmp r1; }
r=build-s25a; b=/tmp/qb; A=/tmp/a
log build
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/arts.tar.xz -C $A
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-quantize qfuse-run qfuse-bench qfuse-synthetic-model qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$A/rtn/quantize-formats.qfa QFUSE_CALIBRATION_QFA=$A/tiny/tiny-llama-fp16.qfa QFUSE_GPTQ_ARTIFACTS=$A/gptq \
  timeout 240 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='GptqActOrderGpu.*:GptqDeviceWeightsGpu.*:DeviceHalfRoundGpuTest.*:DeviceWidenGpuTest.*:BackgroundLoadGpu.*:QuantizeGpu*:DeviceGather*:KeptValues*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log | head -30; pack
log "tiny Llama: device vs --host-weights"
t=/tmp/tiny; rm -rf $t; mkdir -p $t
for dt in f16 bf16; do
  $b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/m-$dt --seed 1 --dtype $dt > /dev/null; cp $A/tiny/qfuse-*.qfa $t/m-$dt/
done
for name in f16 st ao pc fp8 bf16 bf16-fp8; do
  enc=int4-g128; extra=; dt=f16
  case $name in st) extra=--static-groups;; ao) extra="--act-order --static-groups";; pc) enc=int8;; fp8) enc=fp8;;
    bf16) dt=bf16;; bf16-fp8) dt=bf16; enc=fp8;; esac
  for mode in device host; do
    h=$([ $mode = host ] && echo --host-weights || true)
    timeout 60 $b/bin/qfuse-quantize --model $t/m-$dt --encoding $enc --calibration random:64 --seq-len 128 \
      --out $t/$name-$mode $h $extra --json $res/tiny-$name-$mode.json > $res/tiny-$name-$mode.log 2>&1 || echo "tiny $name $mode rc=$?"
  done
  cmp -s $t/$name-device/model.safetensors $t/$name-host/model.safetensors && echo "tiny $name: IDENTICAL" || echo "tiny $name: DIFFER"
  grep -h "widened" $res/tiny-$name-device.log | head -1
done; pack
log "crossover: Qwen2.5-7B training shapes"
QFUSE_BENCH=$b/bin/qfuse-bench ZOO_WORK=/tmp/xz bash bench/zoo/run-zoo.sh $r/xover 200 > $res/xover.txt 2>&1
tail -25 $res/xover.txt; pack
log "Llama-3-8B checkpoint (fp16): qfuse-quantize 8 x 256"
m=/tmp/l8b
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/rtn/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
for i in 1 2; do
  rm -rf /tmp/q-f$i
  timeout 150 /usr/bin/time -v -o $res/f$i.time $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:8 --seq-len 256 --fp16-artifact $m/qfuse-fp16-calib-256.qfa --out /tmp/q-f$i --json $res/f$i.json > $res/f$i.log 2>&1
  echo "f$i rc=$? wall $(grep Elapsed $res/f$i.time | awk '{print $NF}')"; grep -h "widened" $res/f$i.log | head -1
done
cmp -s /tmp/q-f1/model.safetensors /tmp/q-f2/model.safetensors && echo "f1 f2 IDENTICAL" || echo "f1 f2 DIFFER"
pack
log done
