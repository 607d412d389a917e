#!/usr/bin/env bash
# Session 22, GPU call 1 (build-s22 carried: vendor.tgz, rtn.tgz, pack.patch
# = the change against dbd8823). Issue 19: each GPTQ group packs its codes
# on the device on its own stream into page-locked blocks, instead of
# through DeviceGather::run (one lock, one stream, pageable downloads).
#  - runtime built twice: the tree as carried (new) and with pack.patch
#    reversed (old, = main at dbd8823);
#  - DeviceGatherGpuTest, BackgroundPacker tests;
#  - qfuse-quantize 8 x 256 of the Llama-3-8B-shaped fp16 checkpoint:
#    new x3, old x2 (wall time, /usr/bin/time -v), QFUSE_PACK=check (every
#    module's device-packed codes against format::packCodeBytes), outputs
#    compared with cmp; 128 x 512 once each.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r1; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r1.tgz" -C /tmp r1; }
r=build-s22; b=/tmp/qb; bo=/tmp/qbo
log build
tar xzf $r/vendor.tgz
rm -rf /tmp/old; mkdir /tmp/old; git ls-files -z | xargs -0 cp --parents -t /tmp/old 2>/dev/null
cp -r build-vendor /tmp/old/ 2>/dev/null
( cd /tmp/old && patch -s -R -p1 < $OLDPWD/$r/pack.patch ) || { echo "patch -R failed"; pack; exit 1; }
for pair in ".:$b" "/tmp/old:$bo"; do
  s=${pair%%:*}; d=${pair#*:}
  { cmake -G Ninja -S $s -B $d -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build $d -j16 --target qfuse-quantize qfuse-runtime-tests qfuse-runtime-gpu-tests; } > $res/build-$(basename $d).log 2>&1 ||
    { tail -30 $res/build-$(basename $d).log; pack; exit 1; }
done
log tests
$b/unittests/Runtime/qfuse-runtime-tests --gtest_filter='BackgroundPacker*:PinnedBytes*' > $res/unit.log 2>&1
grep -E "^\[  (PASSED|FAILED) " $res/unit.log
tar xzf $r/rtn.tgz
QFUSE_QUANTIZE_QFA=$PWD/build-rtn/quantize-formats.qfa $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='DeviceGatherGpu*:PinnedBytesPoolGpu*' > $res/unit-gpu.log 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log
log checkpoint
m=/tmp/l8b; A=$PWD/build-rtn
[ -f $m/model.safetensors ] || [ -f $m/model-00001-of-00004.safetensors ] ||
  python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1
cp $A/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
run() { # name binary calibration seqlen [env]
  local name=$1 bin=$2 cal=$3 len=$4; shift 4
  rm -rf /tmp/q-$name
  env "$@" timeout 120 /usr/bin/time -v -o $res/$name.time $bin/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:$cal --seq-len $len --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-$len.qfa \
    --out /tmp/q-$name --json $res/$name.json > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}') own $(python3 -c "import json;j=json.load(open('$res/$name.json'));print(round(j['seconds'],2), 'gptq', round(j['phases']['layers_gptq'],2), j.get('codes_packed_on'))" 2>/dev/null)"
}
log "8 x 256"
run old1 $bo 8 256 X=1; run new1 $b 8 256 X=1; run old2 $bo 8 256 X=1; run new2 $b 8 256 X=1; run new3 $b 8 256 X=1
run check $b 8 256 QFUSE_PACK=check
run host $b 8 256 QFUSE_PACK=host
for o in old1 new2 check host; do cmp -s /tmp/q-new1/model.safetensors /tmp/q-$o/model.safetensors; echo "new1 vs $o cmp rc=$?"; done
pack
ls $A/llama3-8b/ | grep -q calib-512 && { log "128 x 512"; run old512 $bo 128 512 X=1; run new512 $b 128 512 X=1;
  cmp -s /tmp/q-old512/model.safetensors /tmp/q-new512/model.safetensors; echo "old512 vs new512 cmp rc=$?"; }
pack; log done
