#!/usr/bin/env bash
# The main job: compile the example layers in examples/ into artifacts, show
# what the pipeline chose (IR and roofline per fused matmul), and run them on
# the GPU where one is present.
set -euo pipefail
build="${1:-build}"
bin="$build/bin"
out="$build/demo"
mkdir -p "$out"
for f in examples/*.mlir; do
  name="$(basename "$f" .mlir)"
  echo "=== $f"
  echo "--- after fusion, tiling and layout selection (with roofline):"
  "$bin/qfuse-opt" "$f" --canonicalize --qf-fuse-dequant-matmul \
    --qf-select-tiling --qf-choose-layout --qf-roofline \
    --mlir-print-op-on-diagnostic=false 2>&1
  "$bin/qfuse-compile" "$f" --batch-sizes=1,2,4,8 -o "$out/$name.qfa"
  echo "--- artifact: $out/$name.qfa ($(wc -c < "$out/$name.qfa") bytes)"
done

# A whole model, from config.json to generated tokens (docs/decode-model.md):
# a synthetic tiny Llama written as a real checkpoint, its IR emitted by the
# Python frontend, compiled for decode (batch 1) and prefill chunks (batch
# 8) in int4-g128 and in fp16 (cuBLAS linear layers), then generated with
# and checked against the C++ reference decoder where a GPU is present.
model="$out/tiny-llama"
echo "=== whole model: $model (synthetic tiny Llama)"
"$bin/qfuse-synthetic-model" --config-preset tiny-llama --out "$model" --seed 1
# The artifacts go next to the checkpoint, where qfuse-run --encoding finds
# them (DIR/qfuse-<encoding>.qfa).
for enc in int4-g128 fp16; do
  PYTHONPATH=python-frontend python3 -m qfuse emit --config "$model/config.json" \
    --encoding "$enc" --batch dynamic --max-seq 256 -o "$out/tiny-llama-$enc.mlir"
  "$bin/qfuse-compile" "$out/tiny-llama-$enc.mlir" --batch-sizes=1,8 \
    -o "$model/qfuse-$enc.qfa"
  echo "--- artifact: $model/qfuse-$enc.qfa ($(wc -c < "$model/qfuse-$enc.qfa") bytes)"
done
# Its tokenizer (written with it): a text prompt becomes ids.
echo "--- the prompt through the model's tokenizer:"
"$bin/qfuse-tokenize" --tokenizer "$model" --text "Once upon a time" --tokens

# GPTQ of the same model on the GPU (docs/gptq.md): the block kernels for
# its shapes (compile-gptq) and the fp16 plan it calibrates through are
# compiled here; where a GPU is present, 32 random sequences of 128 tokens
# calibrate it layer by layer, the quantized checkpoint is written next to
# the model, generates, and is compared with round-to-nearest against the
# dense reference decoder.
echo "=== GPTQ: $model"
PYTHONPATH=python-frontend python3 -m qfuse compile-gptq \
  --config "$model/config.json" --encoding int4-g128 \
  -o "$model/qfuse-gptq-int4-g128.qfa"
PYTHONPATH=python-frontend python3 -m qfuse emit --config "$model/config.json" \
  --encoding fp16 --batch dynamic --max-seq 256 -o "$out/tiny-llama-fp16-calib.mlir"
"$bin/qfuse-compile" "$out/tiny-llama-fp16-calib.mlir" --batch-sizes=1,128 \
  -o "$model/qfuse-fp16-calib.qfa" 2> /dev/null
echo "--- artifacts: $model/qfuse-gptq-int4-g128.qfa, $model/qfuse-fp16-calib.qfa"

# Everything compiled above runs on the GPU where one is present
# (scripts/demo-run.sh; the GPU round runs the same script on a copy).
scripts/demo-run.sh "$build" "$out"
