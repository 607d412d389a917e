#!/usr/bin/env bash
# Slim GPTQ timing round: build, checkpoint, 8x256 twice (+ warm-up off), 128x512.
set -u
out=${OUT:-/tmp/out}; mkdir -p $out/r6; findmnt -T /tmp > $out/r6/mount.txt 2>&1
log() { echo "[$(date +%T)] $*"; }
R=$PWD/build-c; A=$PWD/build-c/art; b=/tmp/qb
cd $R/src
log build
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/r6/cfg.log 2>&1 || { tail $out/r6/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-run qfuse-runtime-gpu-tests > $out/r6/build.log 2>&1 || { tail -30 $out/r6/build.log; exit 1; }
log checkpoint
m=/tmp/l8b; rm -rf $m
python3 - "$R/src/examples/configs/llama3-8b.json" $m > $out/r6/checkpoint.log 2>&1 <<'PY'
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
q() { # name samples seq [env]
  log "$1"
  env $4 timeout 90 /usr/bin/time -v $b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:$2 --seq-len $3 \
    --out /tmp/q-$1 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-$3.qfa --json $out/r6/$1.json > $out/r6/$1.log 2>&1; echo "rc=$?" >> $out/r6/$1.log
  grep -E "layer (1|2|32)/|bound in|qfuse-quantize:|Elapsed|rc=" $out/r6/$1.log
  sleep 2; ls -a /tmp/q-$1 > $out/r6/$1.ls; rm -rf /tmp/q-$1
}
q 8x256 8 256 X=1
q 8x256-b 8 256 X=1
q 8x256-nowarm 8 256 QFUSE_GPTQ_WARM_UP=0
q 128x512 128 512 X=1
log done
