#!/usr/bin/env bash
# Session 24, GPU call 5 (build-s24d carried: vendor.tgz, arts.tar.xz made by
# make-round5.sh beside this file): the merged tree.
#  1. GPU tests: the GPTQ pipeline's (act-order and static/per-channel fits
#     against hostPrepare), quantize-at-load's (QuantizeGpu, KeptValues,
#     DeviceGather: every generated kernel against the host's bytes), and
#     act_order's (PermGuards, SiluMulPrologueGpu);
#  2. the tiny Llama: qfuse-quantize device vs --host-weights, byte-identical
#     (int4-g128; static groups; act-order + static groups; int8 per channel);
#  3. act_order down_proj behind the folded silu_mul (Qwen2.5-7B downs:
#     ao = default, aop = silu_mul + permute launches, int4 = plain), every
#     plan checked and timed; the fallback for perms that differ checked;
#  4. Llama-3-8B-shaped random fp16 checkpoint: quantize-at-load of 2:4+int4
#     and unquantized 2:4 (--rtn check, then device: bound time, tokens),
#     int4-g128 --rtn device; qfuse-quantize 8 x 256 plain, static groups,
#     act-order + static groups.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r5; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r5.tgz" -C /tmp r5; }
r=build-s24d; b=/tmp/qb; A=/tmp/a
log build
tar xzf $r/vendor.tgz; rm -rf $A; mkdir -p $A; tar xJf $r/arts.tar.xz -C $A
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-quantize qfuse-run qfuse-bench qfuse-synthetic-model qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$A/rtn/quantize-formats.qfa QFUSE_CALIBRATION_QFA=$A/tiny/tiny-llama-fp16.qfa QFUSE_GPTQ_ARTIFACTS=$A/gptq \
  QFUSE_ACT_ORDER_ARTIFACTS=$A/ao/tests timeout 240 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='GptqActOrderGpu.*:GptqDeviceWeightsGpu.*:DeviceHalfRoundGpuTest.*:BackgroundLoadGpu.*:QuantizeGpu*:DeviceGather*:KeptValues*:PermGuards*:SiluMulPrologue*' > $res/unit-gpu.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log | head -30; pack
log "tiny Llama: device vs --host-weights"
t=/tmp/tiny; rm -rf $t; mkdir -p $t
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/m --seed 1 --dtype f16 > /dev/null; cp $A/tiny/qfuse-*.qfa $t/m/
for name in f16 st ao pc; do
  enc=int4-g128; extra=
  case $name in st) extra=--static-groups;; ao) extra="--act-order --static-groups";; pc) enc=int8;; esac
  for mode in device host; do
    h=$([ $mode = host ] && echo --host-weights || true)
    timeout 60 $b/bin/qfuse-quantize --model $t/m --encoding $enc --calibration random:64 --seq-len 128 \
      --out $t/$name-$mode $h $extra --json $res/tiny-$name-$mode.json > $res/tiny-$name-$mode.log 2>&1 || echo "tiny $name $mode rc=$?"
  done
  cmp -s $t/$name-device/model.safetensors $t/$name-host/model.safetensors && echo "tiny $name: IDENTICAL" || echo "tiny $name: DIFFER"
done; pack
log "act_order down_proj behind silu_mul (Qwen2.5-7B downs)"
cd $A/ao
while read -r name args; do
  timeout 120 $b/bin/qfuse-bench $args --json $res/$name.json > $res/$name.log 2>&1
  echo "$name rc=$? $(grep -c -E 'FAIL|mismatch' $res/$name.log) failure lines"
done < runs.txt
cd - > /dev/null; pack
log "Llama-3-8B checkpoint (fp16)"
m=/tmp/l8b
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/rtn/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
bind() { # name, qfuse-run options
  local name=$1; shift
  timeout 120 /usr/bin/time -v -o $res/$name.time $b/bin/qfuse-run --model $m --prompt-ids 1,2,3 --max-new-tokens 8 \
    --json $res/$name.json "$@" > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}') $(grep -E 'tokens:' $res/$name.log | head -1)"
  grep -E "quantize-at-load|bound in|rror" $res/$name.log | cut -c1-300
}
for sp in sp-int4 sp-f16; do bind $sp-check --artifact $m/qfuse-$sp.qfa --rtn check; bind $sp-device --artifact $m/qfuse-$sp.qfa --rtn device; done
bind int4-device --encoding int4-g128 --rtn device; pack
q() { # name encoding flags...
  local name=$1 enc=$2; shift 2; rm -rf /tmp/q-$name
  timeout 150 /usr/bin/time -v -o $res/$name.time $b/bin/qfuse-quantize --model $m --encoding $enc \
    --calibration random:8 --seq-len 256 --fp16-artifact $m/qfuse-fp16-calib-256.qfa --out /tmp/q-$name --json $res/$name.json "$@" > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}')"; rm -rf /tmp/q-$name
}
q f1 int4-g128; q st int4-g128 --static-groups; q ao int4-g128 --act-order --static-groups; pack
log done
