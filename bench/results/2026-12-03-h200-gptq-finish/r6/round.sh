#!/usr/bin/env bash
# Round 6 (session 16): blocked (lower-triangle) Hessians from K = 8192,
# qfuse-quantize's exit without teardown, 512 x 2048 in chunks of 2048.
set -u
out=${OUT:-/tmp/out}; mkdir -p $out/r6
log() { echo "[$(date +%T)] $*"; }
pack() { tar -C $out -czf $out/r6.tgz r6; }
R=$PWD/build-r5; A=$R/art; b=/tmp/qb6
rm -rf build-vendor && cp -r $R/vendor build-vendor
log build
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/r6/cfg.log 2>&1 || { tail $out/r6/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-runtime-gpu-tests > $out/r6/build.log 2>&1 || { tail -30 $out/r6/build.log; exit 1; }
log "unit tests"
$b/unittests/Runtime/qfuse-runtime-gpu-tests --gtest_filter='CalibrationGpu.GpuHessian*:GpuHessianBlocks.*' > $out/r6/gpu-tests.log 2>&1; rc=$?
tail -4 $out/r6/gpu-tests.log; grep -E "Failure|Expected|Which is|blocks" $out/r6/gpu-tests.log | head; pack
[ $rc -eq 0 ] || { echo "unit tests failed"; exit 1; }
log checkpoint
m=/tmp/l8b; rm -rf $m
python3 - examples/configs/llama3-8b.json $m > $out/r6/checkpoint.log 2>&1 <<'PY'
import sys, time, torch, transformers
t = time.time()
cfg = transformers.AutoConfig.from_pretrained(sys.argv[1])
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float16)
model.save_pretrained(sys.argv[2])
print(f"checkpoint written in {time.time() - t:.1f} s")
PY
tail -1 $out/r6/checkpoint.log; sync
cp $A/llama3-8b/qfuse-gptq-int4-g128.qfa $A/llama3-8b/qfuse-int4-g128.qfa $m/
q() { # name samples seq calib-plan [timeout]
  log "$1"
  timeout ${5:-90} /usr/bin/time -v python3 $R/stamp.py $b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:$2 --seq-len $3 \
    --out /tmp/q-$1 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-$4.qfa --json $out/r6/$1.json > $out/r6/$1.log 2>&1; echo "rc=$?" >> $out/r6/$1.log
  grep -E "layer (1|2|16|32)/|bound in|qfuse-quantize:|exited|Elapsed|rc=" $out/r6/$1.log
  ls -la /tmp/q-$1 > $out/r6/$1.ls 2>&1; sleep 2; rm -rf /tmp/q-$1; pack
}
q 8x256 8 256 256
q 8x256-b 8 256 256
q 512x2048-c2048 512 2048 2048 150
q 512x2048-c512 512 2048 512 130
log done
pack
