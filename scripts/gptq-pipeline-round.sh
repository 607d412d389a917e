#!/usr/bin/env bash
# The GPTQ pipeline round on the GPU machine: builds qfuse-quantize from
# source (no MLIR), checks that the device-weight pipeline writes the same
# checkpoint bytes (hence codes) as the host-weight one on the synthetic
# tiny Llama, then times qfuse-quantize end to end on a Llama-3-8B-shaped
# random fp16 checkpoint written with transformers (wall time, /usr/bin/time
# -v, and the tool's --json phase breakdown). Results go to $OUT as one tar.
#   scripts/gptq-pipeline-round.sh SRC ARTIFACTS
# SRC: a source tree with build-vendor/; ARTIFACTS: tiny-llama/ and
# llama3-8b/ as compiled by `python3 -m qfuse compile/compile-gptq`
# (bench/results/2026-12-01-h200-gptq-pipeline/README.md).
set -uo pipefail
src="$(cd "$1" && pwd)"; arts="$(cd "$2" && pwd)"
res="${OUT:-/tmp/out}/pipeline"; mkdir -p "$res"
log() { echo "[$(date +%T)] $*"; }
finish() { tar -C "$(dirname "$res")" -czf "${OUT:-/tmp/out}/pipeline.tgz" pipeline; }
trap finish EXIT
b=/tmp/qb
log "build"
cmake -G Ninja -S "$src" -B $b -DQFUSE_ENABLE_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release \
  > "$res/configure.log" 2>&1 || { tail -30 "$res/configure.log"; exit 1; }
cmake --build $b -j"$(nproc)" --target qfuse-quantize qfuse-synthetic-model \
  qfuse-runtime-tests > "$res/build.log" 2>&1 || { tail -40 "$res/build.log"; exit 1; }
$b/unittests/Runtime/qfuse-runtime-tests --gtest_filter='DequantizeHalf*:QuantizedCheckpoint*' \
  > "$res/unit.log" 2>&1; tail -3 "$res/unit.log"

log "tiny-llama: device weights against host weights"
t=/tmp/tiny; rm -rf $t; mkdir -p $t
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/model --seed 1 > /dev/null
cp "$arts"/tiny-llama/*.qfa $t/model/
for mode in device host; do
  extra=$([ $mode = host ] && echo --host-weights || true)
  $b/bin/qfuse-quantize --model $t/model --encoding int4-g128 --calibration random:64 \
    --seq-len 128 --out $t/out-$mode $extra --json "$res/tiny-$mode.json" \
    > "$res/tiny-$mode.log" 2>&1 || { echo "tiny $mode failed"; tail -5 "$res/tiny-$mode.log"; }
done
if cmp $t/out-device/model.safetensors $t/out-host/model.safetensors; then
  echo "tiny-llama: IDENTICAL checkpoints (device vs host weights)" | tee "$res/identity.txt"
else
  echo "tiny-llama: checkpoints DIFFER" | tee "$res/identity.txt"
fi
for fmt in compressed-tensors; do
  $b/bin/qfuse-quantize --model $t/model --encoding int4-g128 --calibration random:64 \
    --seq-len 128 --out $t/out-$fmt --format $fmt > "$res/tiny-$fmt.log" 2>&1 \
    && echo "tiny $fmt ok" || { echo "tiny $fmt failed"; tail -3 "$res/tiny-$fmt.log"; }
done

log "llama3-8b: random fp16 checkpoint"
m=/tmp/l8b; rm -rf $m
python3 - "$src/examples/configs/llama3-8b.json" $m > "$res/checkpoint.log" 2>&1 <<'PY'
import sys, time, torch, transformers
t = time.time()
cfg = transformers.AutoConfig.from_pretrained(sys.argv[1])
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float16)
model.save_pretrained(sys.argv[2])
print(f"checkpoint written in {time.time() - t:.1f} s")
PY
tail -1 "$res/checkpoint.log"; du -sh $m
cp "$arts"/llama3-8b/qfuse-gptq-int4-g128.qfa "$arts"/llama3-8b/qfuse-int4-g128.qfa $m/
sync
run() { # name samples seq timeout
  log "quantize $1: random:$2 x $3"
  rm -rf /tmp/q-$1
  timeout "$4" /usr/bin/time -v $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:$2 --seq-len $3 --out /tmp/q-$1 \
    --fp16-artifact "$arts"/llama3-8b/qfuse-fp16-calib-$3.qfa --json "$res/$1.json" \
    > "$res/$1.log" 2>&1; echo "rc=$?" >> "$res/$1.log"
  grep -E "layer (1|2|16|32)/|fp16 weights|calibration:|qfuse-quantize:|Elapsed|Maximum resident|rc=" "$res/$1.log"
  du -sh /tmp/q-$1 2>/dev/null; rm -rf /tmp/q-$1
}
run 8x256 8 256 ${T1:-200}
run 128x512 128 512 ${T2:-280}
log done
