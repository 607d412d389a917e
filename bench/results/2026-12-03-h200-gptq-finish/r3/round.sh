#!/usr/bin/env bash
# Round 5 (session 16): GPTQ 512 x 2048 with the tiled attention, 8 x 256
# with a stamped timeline, then 2:4 at batches 1-64 compiled the default way.
set -u
out=${OUT:-/tmp/out}; mkdir -p $out/r5
log() { echo "[$(date +%T)] $*"; }
R=$PWD/build-r5; A=$R/art; b=/tmp/qb5
rm -rf build-vendor && cp -r $R/vendor build-vendor
log build
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_ENABLE_UNITTESTS=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/r5/cfg.log 2>&1 || { tail $out/r5/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-bench > $out/r5/build.log 2>&1 || { tail -30 $out/r5/build.log; exit 1; }
log checkpoint
m=/tmp/l8b; rm -rf $m
python3 - examples/configs/llama3-8b.json $m > $out/r5/checkpoint.log 2>&1 <<'PY'
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
q() { # name samples seq calib-plan [timeout]
  log "$1"
  timeout ${5:-90} /usr/bin/time -v python3 $R/stamp.py $b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:$2 --seq-len $3 \
    --out /tmp/q-$1 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-$4.qfa --json $out/r5/$1.json > $out/r5/$1.log 2>&1; echo "rc=$?" >> $out/r5/$1.log
  grep -E "layer (1|2|16|32)/|bound in|qfuse-quantize:|exited|Elapsed|rc=" $out/r5/$1.log
  sleep 2; rm -rf /tmp/q-$1
}
q 8x256 8 256 256
q 8x256-b 8 256 256
q 512x2048 512 2048 512 260
log "2:4 default compile"
QFUSE_BENCH=$b/bin/qfuse-bench OUT=$out timeout 200 bash $R/sp4/run.sh $R/sp4 2>&1 | tail -40
log done
tar -C $out -czf $out/r5.tgz r5 && rm -rf $out/r5
