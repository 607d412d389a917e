#!/usr/bin/env bash
# Session 17, round 1 on the H200 (issue 19): qfuse-quantize 8 x 256 alone,
# three times, timed by /usr/bin/time with its output to a file (no pipe);
# then the C API's quantize-at-load (`python3 -m qfuse generate --model`,
# libqfuse_c) against qfuse-run's tokens, and the C API GPU tests on the
# Llama-3-8B-shaped checkpoint. Carries build-c17: art/ (the calibration and GPTQ
# artifacts of session 16), rtn/ (bench/quantize-at-load/make-artifacts.sh)
# and vendor/ (runtime/tools/vendor-headers.sh).
set -u
out=${OUT:-/tmp/out}; res=/tmp/r1; rm -rf $res; mkdir -p $res $out
log() { echo "[$(date +%T)] $*"; }
pack() { tar -C /tmp -czf $out/r1.tgz r1; }
R=$PWD/build-c17; A=$R/art
rm -rf build-vendor && cp -r $R/vendor build-vendor; b=/tmp/qb; m=/tmp/l8b
nvidia-smi -L
log build
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $res/cfg.log 2>&1 || { tail $res/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-run qfuse_c qfuse-c-api-gpu-tests > $res/build.log 2>&1 || { tail -30 $res/build.log; exit 1; }
log checkpoint
python3 - examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1 <<'PY'
import sys, time, torch, transformers
t = time.time()
cfg = transformers.AutoConfig.from_pretrained(sys.argv[1])
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float16)
model.save_pretrained(sys.argv[2])
print(f"checkpoint written in {time.time() - t:.1f} s")
PY
tail -1 $res/checkpoint.log; sync
cp $A/llama3-8b/qfuse-gptq-int4-g128.qfa $A/llama3-8b/qfuse-int4-g128.qfa $m/
cat $m/*.safetensors > /dev/null
for i in 1 2 3; do
  log "8x256 run $i"
  timeout 90 /usr/bin/time -v -o $res/8x256-$i.time $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:8 --seq-len 256 --out /tmp/q-$i --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa \
    --json $res/8x256-$i.json > $res/8x256-$i.log 2>&1; echo "rc=$?" >> $res/8x256-$i.log
  grep -E "Elapsed|Exit" $res/8x256-$i.time; grep -E "qfuse-quantize:|rc=" $res/8x256-$i.log | tail -3
  ls -la /tmp/q-$i > $res/8x256-$i.ls 2>&1; sleep 3; rm -rf /tmp/q-$i; pack
done
cp $R/rtn/llama3-8b/qfuse-int4-g128.qfa $R/rtn/llama3-8b/qfuse-int4-g128.quantize.qfa $m/
log "qfuse-run (default --rtn device)"
timeout 120 /usr/bin/time -v -o $res/run.time $b/bin/qfuse-run --model $m --encoding int4-g128 \
  --prompt-ids 1,2,3 --max-new-tokens 8 --json $res/run.json > $res/run.log 2>&1; echo "rc=$?" >> $res/run.log
grep -E "Elapsed" $res/run.time; grep -E "quantize-at-load|bound in|tokens|rc=" $res/run.log | tail -5
log "python3 -m qfuse generate --model (C API)"
QFUSE_C_LIBRARY=$b/lib/libqfuse_c.so PYTHONPATH=python-frontend timeout 120 /usr/bin/time -v -o $res/generate.time \
  python3 -m qfuse generate --model $m --prompt-ids 1,2,3 --max-new-tokens 8 > $res/generate.log 2>&1; echo "rc=$?" >> $res/generate.log
grep -E "Elapsed" $res/generate.time; tail -6 $res/generate.log; pack
log "qfuse-c-api-gpu-tests on the 8B checkpoint"
QFUSE_THREADS_MODEL=$m timeout 240 $b/unittests/Runtime/qfuse-c-api-gpu-tests > $res/capi-gpu.log 2>&1; echo "rc=$?" >> $res/capi-gpu.log
grep -E "^\[  (PASSED|FAILED|SKIPPED|       OK)|Failure|rc=" $res/capi-gpu.log | head
log done; pack
