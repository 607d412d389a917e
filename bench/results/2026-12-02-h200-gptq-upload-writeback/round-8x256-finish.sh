#!/usr/bin/env bash
# 512 x 2048 calibration tokens (issue 19's LLM Compressor-sized setting).
set -u
out=${OUT:-/tmp/out}; mkdir -p $out/r5
log() { echo "[$(date +%T)] $*"; }
R=$PWD/build-r3; A=$PWD/build-r2/art; b=/tmp/qb
cd $R/src
log build
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_ENABLE_UNITTESTS=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/r5/cfg.log 2>&1 || { tail $out/r5/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize > $out/r5/build.log 2>&1 || { tail -30 $out/r5/build.log; exit 1; }
log checkpoint
m=/tmp/l8b; rm -rf $m
python3 - "$R/src/examples/configs/llama3-8b.json" $m > $out/r5/checkpoint.log 2>&1 <<'PY'
import sys, time, torch, transformers
t = time.time()
cfg = transformers.AutoConfig.from_pretrained(sys.argv[1])
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float16)
model.save_pretrained(sys.argv[2])
print(f"checkpoint written in {time.time() - t:.1f} s")
PY
tail -1 $out/r5/checkpoint.log; sync
cp $A/llama3-8b/qfuse-gptq-int4-g128.qfa $A/llama3-8b/qfuse-int4-g128.qfa $m/
log "512 x 2048"
timeout 120 /usr/bin/time -v $b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:8 --seq-len 256 \
  --out /tmp/q-8x256 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa --json $out/r5/8x256.json \
  > $out/r5/8x256.log 2>&1; echo "rc=$?" >> $out/r5/8x256.log
grep -E "layer (1|2|16|32)/|calibration:|bound in|qfuse-quantize:|Elapsed|Maximum resident|rc=" $out/r5/8x256.log
log done
tar -C $out -czf $out/r5.tgz r5
