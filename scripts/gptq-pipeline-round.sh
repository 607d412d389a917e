#!/usr/bin/env bash
# The GPTQ pipeline round on the GPU machine: builds qfuse-quantize from
# source (no MLIR), checks that the device-weight pipeline writes the same
# checkpoint bytes (hence codes) as the host-weight one on the synthetic
# tiny Llama, then times qfuse-quantize end to end on a Llama-3-8B-shaped
# random fp16 checkpoint written with transformers (wall time, /usr/bin/time
# -v, and the tool's --json phase breakdown). Results go to $OUT as one tar.
#   scripts/gptq-pipeline-round.sh SRC ARTIFACTS [BASELINE]
# SRC: a source tree with build-vendor/; ARTIFACTS: tiny-llama/, test/ and
# llama3-8b/ as compiled by `python3 -m qfuse compile/compile-gptq`
# (bench/results/2026-12-01-h200-gptq-pipeline/README.md); BASELINE: a
# folder of earlier reports (tiny-device.json, 8x256.json, 128x512.json)
# whose per-module losses this round's must equal.
set -uo pipefail
src="$(cd "$1" && pwd)"; arts="$(cd "$2" && pwd)"
base="${3:+$(cd "$3" && pwd)}"
same() { # report name: losses against the baseline's
  [ -n "$base" ] && [ -f "$base/$2" ] && python3 "$src/scripts/gptq-compare-losses.py" \
    "$base/$2" "$1" | sed "s|^|$2 against the baseline: |" | tee -a "$res/identity.txt"
}
res="${OUT:-/tmp/out}/pipeline"; mkdir -p "$res"
log() { echo "[$(date +%T)] $*"; }
finish() { tar -C "$(dirname "$res")" -czf "${OUT:-/tmp/out}/pipeline.tgz" pipeline; }
trap finish EXIT
b=/tmp/qb
log "build"
cmake -G Ninja -S "$src" -B $b -DQFUSE_ENABLE_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release \
  > "$res/configure.log" 2>&1 || { tail -30 "$res/configure.log"; exit 1; }
cmake --build $b -j"$(nproc)" --target qfuse-quantize qfuse-synthetic-model \
  qfuse-runtime-tests qfuse-runtime-gpu-tests qfuse-gptq-layer qfuse-run qfuse-model-check \
  > "$res/build.log" 2>&1 || { tail -40 "$res/build.log"; exit 1; }
$b/unittests/Runtime/qfuse-runtime-tests \
  --gtest_filter='DequantizeHalf*:BackgroundPacker*:QuantizedCheckpoint*:Safetensors*' \
  > "$res/unit.log" 2>&1; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$res/unit.log"
# GptqDeviceWeightsGpu: the solver's device f16 weights and code bytes
# against the host path; GptqActOrderGpu: act-order and static groups'
# moves on the device against hostPrepare (the artifacts of test/).
QFUSE_GPTQ_ARTIFACTS="$arts/test" $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='GptqDeviceWeightsGpu*:GptqActOrderGpu*' > "$res/unit-gpu.log" 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \] |Failure" "$res/unit-gpu.log" | head -20

# QUICK=1: the Llama-3-8B timings, the tiny f16 int4 checkpoint against
# the baseline's bytes and the resume check only (no other tiny runs, no
# layer checks, no quantize-at-load).
log "tiny-llama: device weights against host weights"
t=/tmp/tiny; rm -rf $t; mkdir -p $t
tiny() { # name dtype encoding format flags...
  local name=$1 dtype=$2 enc=$3 fmt=$4; shift 4
  [ -d $t/model-$dtype ] || { $b/bin/qfuse-synthetic-model --config-preset tiny-llama \
    --out $t/model-$dtype --seed 1 --dtype $dtype > /dev/null; cp "$arts"/tiny-llama/*.qfa $t/model-$dtype/; }
  for mode in device host; do
    extra=$([ $mode = host ] && echo --host-weights || true)
    $b/bin/qfuse-quantize --model $t/model-$dtype --encoding $enc --calibration random:64 \
      --seq-len 128 --out $t/$name-$mode --format $fmt $extra "$@" --json "$res/tiny-$name-$mode.json" \
      > "$res/tiny-$name-$mode.log" 2>&1 || { echo "tiny $name $mode failed"; tail -3 "$res/tiny-$name-$mode.log"; }
  done
  local sum; sum=$(sha256sum < $t/$name-device/model.safetensors | cut -c1-16)
  if cmp -s $t/$name-device/model.safetensors $t/$name-host/model.safetensors; then
    echo "tiny-llama $name: IDENTICAL checkpoints (device vs host weights), sha256 $sum"
  else
    echo "tiny-llama $name: checkpoints DIFFER"
  fi | tee -a "$res/identity.txt"
  # The baseline round's checkpoint of the same run, by its sha256.
  if [ -n "$base" ] && [ -f "$base/identity.txt" ]; then
    if grep -q "tiny-llama $name: .*sha256 $sum" "$base/identity.txt"; then
      echo "tiny-llama $name: same checkpoint bytes as the baseline"
    else
      echo "tiny-llama $name: checkpoint bytes DIFFER from the baseline"
    fi | tee -a "$res/identity.txt"
  fi
}
tiny f16-int4 f16 int4-g128 qfuse
if [ -z "${QUICK:-}" ]; then
tiny bf16-int4 bf16 int4-g128 qfuse
tiny f16-nvfp4 f16 nvfp4 compressed-tensors
tiny f16-int4-actorder f16 int4-g128 qfuse --act-order --static-groups
tiny f16-int4-ct f16 int4-g128 compressed-tensors
fi
for name in f16-int4 bf16-int4 f16-nvfp4 f16-int4-actorder f16-int4-ct; do
  [ -f "$res/tiny-$name-device.json" ] && same "$res/tiny-$name-device.json" tiny-$name-device.json
done

log "tiny-llama: int4-g128 at load (the loader's repacking) against the reference"
$b/bin/qfuse-model-check --model $t/model-f16 --artifact "$arts/tiny-llama/qfuse-int4-g128.qfa" \
  --prompt-ids 1,2,3 --steps 16 > "$res/model-check.log" 2>&1 \
  && echo "model-check int4 at load: ok" || { echo "model-check: FAILED"; tail -5 "$res/model-check.log"; }

log "tiny-llama: --resume after a kill after every layer (byte-identical)"
bash "$src/scripts/quantize-resume-check.sh" $b $t/model-f16 /tmp/resume > "$res/resume.log" 2>&1
echo "resume: $(grep -c '^PASS' "$res/resume.log") passed, $(grep -c '^FAIL' "$res/resume.log") failed"
grep '^FAIL' "$res/resume.log" | head -5

if [ -z "${QUICK:-}" ]; then
log "the solver against the C++ reference (qfuse-gptq-layer)"
groups="--group qkv:384,128,128:384 --group o:384:384 --group gate_up:640,640:384 --group down:384:640"
i4="int4, group = 128, scale = f16"; n4="fp4e2m1, group = 16, scale = f8E4M3FN, global_scale"
layer() { # name encoding artifact flags...
  local name=$1 enc=$2 art=$3; shift 3
  $b/bin/qfuse-gptq-layer --artifact "$arts/test/$art" --encoding "$enc" $groups --tokens 1024 \
    --eager --reference "$@" --json "$res/layer-$name.json" > "$res/layer-$name.log" 2>&1 \
    && echo "layer $name: ok" || { echo "layer $name: FAILED"; grep -E "FAIL|error" "$res/layer-$name.log" | head -5; }
}
layer int4-g128 "$i4" test-int4-g128.qfa --heldout
layer int4-g128-actorder "$i4" test-int4-g128.qfa --act-order --static-groups
layer nvfp4 "$n4" test-nvfp4.qfa

fi # QUICK

log "disk: 4 GiB written and synced in /tmp"
dd if=/dev/zero of=/tmp/dd-test bs=1M count=4096 conv=fsync 2>&1 | tail -1 | tee "$res/disk.txt"
rm -f /tmp/dd-test

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
  same "$res/$1.json" "$1.json"
  du -sh /tmp/q-$1 2>/dev/null; rm -rf /tmp/q-$1
}
run 128x512 128 512 ${T2:-280}
run 8x256 8 256 ${T1:-200}

[ -n "${QUICK:-}" ] && { log done; exit 0; }
# Quantize-at-load: the fp16 checkpoint bound into the int4-g128 artifact
# (round to nearest), as `qfuse-run --model` does for a user; one token.
log "qfuse-run --model: int4-g128 at load"
timeout ${T3:-200} /usr/bin/time -v $b/bin/qfuse-run --model $m --encoding int4-g128 \
  --prompt-ids 1,2,3 --max-new-tokens 1 --json "$res/load-int4.json" \
  > "$res/load-int4.log" 2>&1; echo "rc=$?" >> "$res/load-int4.log"
grep -E "load|Elapsed|rc=" "$res/load-int4.log" | head -5
log done
