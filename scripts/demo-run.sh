#!/usr/bin/env bash
# The GPU half of `make demo`: runs what scripts/demo.sh compiled into
# DEMO_DIR (default BUILD/demo) with the runtime tools of BUILD. Without a
# GPU it says so and succeeds. The GPU round (scripts/gpu-round.sh) runs it
# on a copy of the compiled demo, with the runtime built there.
#
#   scripts/demo-run.sh [BUILD] [DEMO_DIR]
set -euo pipefail
build="${1:-build}"
out="${2:-$build/demo}"
bin="$build/bin"
model="$out/tiny-llama"
if ! { [ -x "$bin/qfuse-run" ] && command -v nvidia-smi > /dev/null 2>&1 \
       && nvidia-smi -L > /dev/null 2>&1; }; then
  echo "--- no GPU here: the artifacts are compiled but not run"
  exit 0
fi

# The example layers, checked against the reference at every batch size.
for artifact in "$out"/*.qfa; do
  echo "=== $artifact"
  "$bin/qfuse-bench" --artifact "$artifact" --check
done

# The whole tiny model: text in, text out (random weights: the words are
# arbitrary), then checked against the C++ reference decoder.
echo "=== whole model: $model"
echo "--- text in, text out (greedy):"
"$bin/qfuse-run" --model "$model" --encoding int4-g128 \
  --prompt "Once upon a time" --max-new-tokens 32
echo "--- the chat format, sampled (temperature 0.8, top-p 0.95, seed 1):"
"$bin/qfuse-run" --model "$model" --encoding int4-g128 --chat \
  --system "Be brief." --prompt "What is the capital of France?" \
  --temperature 0.8 --top-p 0.95 --seed 1 --max-new-tokens 32
"$bin/qfuse-run" --model "$model" --encoding int4-g128 --fp16 \
  --prompt-ids 5,17,300,42,7 --max-new-tokens 32
"$bin/qfuse-model-check" --model "$model" \
  --artifact "$model/qfuse-int4-g128.qfa" --prompt-ids 5,17,300,42,7 --steps 32

# GPTQ (docs/gptq.md): 32 random sequences of 128 tokens calibrate the model
# layer by layer through the fp16 plan; the quantized checkpoint is written
# next to it, generates, and is compared with round-to-nearest against the
# dense reference decoder.
echo "=== GPTQ: $model"
gptq="$out/tiny-llama-gptq"
QFUSE_C_LIBRARY="$build/lib/libqfuse_c.so" PYTHONPATH=python-frontend \
  python3 -m qfuse quantize --model "$model" --encoding int4-g128 \
  --calibration random:32 --seq-len 128 --out "$gptq" --overwrite
cp "$model/qfuse-int4-g128.qfa" "$gptq/"
"$bin/qfuse-run" --model "$gptq" --encoding int4-g128 \
  --prompt-ids 5,17,300,42,7 --max-new-tokens 32
for weights in "$model" "$gptq"; do
  if [ "$weights" = "$model" ]; then label="round-to-nearest at load"; else label="GPTQ"; fi
  echo "--- $label against the dense fp16 reference decoder:"
  "$bin/qfuse-model-check" --model "$model" --gpu-weights "$weights" \
    --artifact "$model/qfuse-int4-g128.qfa" --prompt-ids 5,17,300,42,7 \
    --steps 32 --dense-reference --tolerance 1 | tail -1
done
