#!/usr/bin/env bash
# Session 23, GPU call 3 (build-s23c carried: vendor.tgz, arts.tar.xz made by
# make-round3.sh beside this file). Issue 19's device paths and issue 18's
# programmatic dependent launch:
#  - GPU tests: act-order/static-group moves against hostPrepare
#    (GptqActOrderGpu), bf16 rounding (DeviceHalfRoundGpuTest,
#    BackgroundLoadGpu), quantize-at-load kernels (QuantizeGpu, DeviceGather);
#  - the tiny Llama: qfuse-quantize device vs --host-weights, byte-identical
#    (f16, bf16, act-order + static groups); qfuse-model-check with PDL;
#  - Llama-3-8B step (as a model wires it) with and without PDL;
#  - Llama-3-8B-shaped random fp16 checkpoint: qfuse-quantize 8 x 256 (x2),
#    act-order + static groups, 128 x 512; qfuse-run 2:4+int4 --rtn check and
#    device; int4 tokens with and without PDL; a bf16 checkpoint 8 x 256
#    (x2) against --host-weights; 512 x 2048 last.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3; rm -rf $res; mkdir -p $res
start=$(date +%s); left() { echo $(( ${BUDGET:-560} - ($(date +%s) - start) )); }
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r3.tgz" -C /tmp r3; }
r=build-s23c; b=/tmp/qb; A=/tmp/a
log build
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/arts.tar.xz -C $A
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-quantize qfuse-run qfuse-bench qfuse-model-check qfuse-synthetic-model qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$A/rtn/quantize-formats.qfa QFUSE_CALIBRATION_QFA=$A/tiny/tiny-llama-fp16.qfa QFUSE_GPTQ_ARTIFACTS=$A/gptq \
  timeout 200 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='GptqActOrderGpu.*:GptqDeviceWeightsGpu.*:DeviceHalfRoundGpuTest.*:BackgroundLoadGpu.*:QuantizeGpu*:DeviceGather*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log | head -20; pack
log "tiny Llama: device vs --host-weights"
t=/tmp/tiny; rm -rf $t; mkdir -p $t
tiny() { # name dtype flags...
  local name=$1 dtype=$2; shift 2
  [ -d $t/model-$dtype ] || { $b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/model-$dtype --seed 1 --dtype $dtype > /dev/null
    cp $A/tiny/qfuse-*.qfa $t/model-$dtype/; }
  for mode in device host; do
    extra=$([ $mode = host ] && echo --host-weights || true)
    timeout 60 $b/bin/qfuse-quantize --model $t/model-$dtype --encoding int4-g128 --calibration random:64 --seq-len 128 \
      --out $t/$name-$mode $extra "$@" --json $res/tiny-$name-$mode.json > $res/tiny-$name-$mode.log 2>&1 || echo "tiny $name $mode rc=$?"
  done
  cmp -s $t/$name-device/model.safetensors $t/$name-host/model.safetensors && echo "tiny $name: IDENTICAL" || echo "tiny $name: DIFFER"
  grep -hE "rounded|bf16 weights" $res/tiny-$name-device.log | head -3
}
tiny f16 f16; tiny bf16 bf16; tiny ao f16 --act-order --static-groups
QFUSE_PDL=1 timeout 60 $b/bin/qfuse-model-check --model $t/model-f16 --artifact $t/model-f16/qfuse-int4-g128.qfa --prompt-ids 1,2,3 --steps 16 > $res/model-check.log 2>&1 \
  && echo "model-check int4 (PDL): ok" || { echo "model-check: FAILED"; tail -5 $res/model-check.log; }
pack
log "PDL: Llama-3-8B step as a model wires it, sm_90a"
for m in 1 16 64 128; do
  for p in 1 0; do
    QFUSE_PDL=$p timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m --artifact $A/steps/l8b-model-b$m.qfa --placeholder-weights \
      --json $res/step-b$m-pdl$p.json > $res/step-b$m-pdl$p.log 2>&1
    echo "b$m pdl=$p rc=$? $(grep -E '^(cublas|plan)' $res/step-b$m-pdl$p.log | awk '{print $(NF-4)}' | tr '\n' ' ')"
  done
done; pack
log "Llama-3-8B checkpoint (fp16)"
m=/tmp/l8b
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/rtn/llama3-8b/*.qfa $m/; cp $A/sp/*.qfa $m/; cat $m/*.safetensors > /dev/null
q() { # name samples seq calib env...
  local name=$1 n=$2 s=$3 c=$4; shift 4; rm -rf /tmp/q-$name
  env "$@" timeout ${T:-150} /usr/bin/time -v -o $res/$name.time $b/bin/qfuse-quantize --model ${M:-$m} --encoding int4-g128 \
    --calibration random:$n --seq-len $s --fp16-artifact $c --out /tmp/q-$name --json $res/$name.json $QARGS > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}') $(grep -E 'rounded|bf16 weights' $res/$name.log | head -2 | tr '\n' ' ')"
}
C256=$A/rtn/llama3-8b/qfuse-fp16-calib-256.qfa
QARGS= q f1 8 256 $C256 X=1; QARGS= q f2 8 256 $C256 X=1
cmp -s /tmp/q-f1/model.safetensors /tmp/q-f2/model.safetensors; echo "f1 vs f2 cmp rc=$?"; rm -rf /tmp/q-f2
QARGS="--act-order --static-groups" q ao 8 256 $C256 X=1; rm -rf /tmp/q-ao; pack
QARGS= q s512 128 512 $A/calib/qfuse-fp16-calib-512.qfa X=1; rm -rf /tmp/q-s512; pack
log "qfuse-run: 2:4+int4 quantize-at-load, int4 tokens with and without PDL"
for mode in check device; do
  timeout 100 /usr/bin/time -v -o $res/sp-$mode.time $b/bin/qfuse-run --model $m --artifact $m/qfuse-sp.qfa --rtn $mode \
    --prompt-ids 1,2,3 --max-new-tokens 8 --json $res/sp-$mode.json > $res/sp-$mode.log 2>&1
  echo "sp $mode rc=$? wall $(grep Elapsed $res/sp-$mode.time | awk '{print $NF}')"; grep -E "quantize-at-load|bound in|tokens:|layouts|rror" $res/sp-$mode.log | cut -c1-250
done
for p in 1 0; do
  QFUSE_PDL=$p timeout 100 $b/bin/qfuse-run --model $m --encoding int4-g128 --prompt-ids 1,2,3 --max-new-tokens 16 --json $res/run-pdl$p.json > $res/run-pdl$p.log 2>&1
  echo "int4 pdl=$p rc=$? $(grep -E 'tokens:' $res/run-pdl$p.log | head -2 | tr '\n' ' ')"
done; pack
log "bf16 checkpoint"
mb=/tmp/l8bb
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $mb bf16 > $res/checkpoint-bf16.log 2>&1; tail -1 $res/checkpoint-bf16.log
cp $A/rtn/llama3-8b/*.qfa $mb/; cat $mb/*.safetensors > /dev/null
M=$mb QARGS= q b1 8 256 $C256 X=1; M=$mb QARGS= q b2 8 256 $C256 X=1; M=$mb QARGS=--host-weights q bh 8 256 $C256 X=1
for o in b2 bh; do cmp -s /tmp/q-b1/model.safetensors /tmp/q-$o/model.safetensors; echo "b1 vs $o cmp rc=$?"; done
rm -rf /tmp/q-b1 /tmp/q-b2 /tmp/q-bh $mb; pack
if [ "$(left)" -gt 100 ]; then
  log "512 x 2048"
  T=$(( $(left) - 5 )) QARGS= q s2048 512 2048 $A/calib/qfuse-fp16-calib-2048.qfa X=1
else echo "512 x 2048 not run: $(left) s left"; fi
pack; log done
