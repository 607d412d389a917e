#!/usr/bin/env bash
# Session 22, GPU call 5 (build-s22d carried: vendor.tgz; rtn.tgz = build-rtn
# by bench/quantize-at-load/make-artifacts.sh at a27b76c, the merge of
# qal-actorder; ao.tgz = `python3 -m qfuse compile --encoding '#qf.enc<int4,
# group = 128, scale = f16, act_order>'` and `--encoding 2:4+int4` of
# llama3-8b at batches 1,8, with their quantize artifacts).
#  - QuantizeGpuTest, DeviceGatherGpuTest: act_order and 2:4 quantize-at-load
#    kernels byte-identical to format::quantizeRTN;
#  - qfuse-run --rtn check on the Llama-3-8B-shaped fp16 checkpoint into
#    act_order and 2:4+int4, then --rtn device (wall time).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r5; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r5.tgz" -C /tmp r5; }
r=build-s22d; b=/tmp/qb
log build
tar xzf $r/vendor.tgz; tar xzf $r/rtn.tgz; tar xzf $r/ao.tgz -C /tmp
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-run qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$PWD/build-rtn/quantize-formats.qfa $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='QuantizeGpuTest.*:DeviceGatherGpuTest.*' > $res/unit-gpu.log 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log; pack
m=/tmp/l8b
[ -f $m/config.json ] || python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1
cp /tmp/ao/*.qfa $m/; cat $m/*.safetensors > /dev/null
for e in ao sp; do
  for mode in check device; do
    timeout 100 /usr/bin/time -v -o $res/$e-$mode.time $b/bin/qfuse-run --model $m --artifact $m/qfuse-$e.qfa --rtn $mode \
      --prompt-ids 1,2,3 --max-new-tokens 8 --json $res/$e-$mode.json > $res/$e-$mode.log 2>&1
    echo "$e $mode rc=$? wall $(grep Elapsed $res/$e-$mode.time | awk '{print $NF}')"
    grep -E "quantize-at-load|bound in|tokens:|rror" $res/$e-$mode.log | cut -c1-300; pack
  done
done
log done
