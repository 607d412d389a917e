#!/usr/bin/env bash
# Compiles the whole-model artifacts one GPU round checks and times (runs
# here, where the compiler is; scripts/gpu-round.sh runs them on the GPU):
#
# - artifacts/models/tiny-*.qfa: the synthetic tiny Llama and Qwen2 models
#   (qfuse-synthetic-model presets) in every encoding, plus fp16. The GPU
#   round writes the checkpoints itself and runs qfuse-model-check on each
#   (artifacts/models.txt: name, preset, artifact, extra flags).
# - artifacts/models/<model>-<enc>.qfa: Llama-3-8B and Qwen2.5-1.5B shapes
#   (examples/configs) in int4-g128 and fp16, timed by qfuse-run on random
#   weights (artifacts/model-runs.txt: name, qfuse-run arguments).
#
#   bench/make-model-artifacts.sh [build-dir] [--fuse=...]
#   (TINY_ENCODINGS, BIG_MODELS and BIG_ENCODINGS narrow the set)
set -euo pipefail
build="${1:-build}"
fuse="${2:-}"
compile="$build/bin/qfuse-compile --tuning-db=bench/tuning-db.json $fuse"
synth="${SYNTH:-$build/bin/qfuse-synthetic-model}"
emit="env PYTHONPATH=python-frontend python3 -m qfuse emit --batch dynamic"
out=artifacts/models
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git rev-parse --short HEAD > artifacts/COMMIT 2>/dev/null || true
: > artifacts/models.txt
: > artifacts/model-runs.txt

# Decode (1) and prefill chunks (8) share the matvec kernels' weight layout.
batches=1,8
tiny_encodings="${TINY_ENCODINGS:-int4-g128 uint4-g128-asym nf4 nvfp4 mxfp4 int8 fp8 fp16}"
for preset in tiny-llama tiny-qwen2; do
  "$synth" --config-preset "$preset" --out "$tmp/$preset" --seed 1 > /dev/null
  for enc in $tiny_encodings; do
    name="$preset-$enc"
    $emit --config "$tmp/$preset/config.json" --encoding "$enc" --max-seq 256 \
      -o "$tmp/$name.mlir"
    $compile "$tmp/$name.mlir" --batch-sizes=$batches -o "$out/$name.qfa"
    extra=""
    [ "$enc" = fp16 ] && extra="--identical-tokens"
    echo "$name $preset $out/$name.qfa $extra" >> artifacts/models.txt
  done
done

# The fusion choices other than the default, checked on one model: every
# fusion (with the RMSNorm prologue) and none.
for fuse in all none; do
  name="tiny-llama-int4-g128-fuse-$fuse"
  $emit --config "$tmp/tiny-llama/config.json" --encoding int4-g128 \
    --max-seq 256 -o "$tmp/$name.mlir"
  $compile --fuse=$fuse "$tmp/$name.mlir" --batch-sizes=$batches -o "$out/$name.qfa"
  echo "$name tiny-llama $out/$name.qfa" >> artifacts/models.txt
done

big_models="${BIG_MODELS:-llama3-8b qwen2.5-1.5b}"
big_encodings="${BIG_ENCODINGS:-int4-g128}"
for model in $big_models; do
  for enc in $big_encodings fp16; do
    $emit --config "examples/configs/$model.json" --encoding "$enc" \
      --max-seq 1024 -o "$tmp/$model-$enc.mlir"
    $compile "$tmp/$model-$enc.mlir" --batch-sizes=$batches \
      -o "$out/$model-$enc.qfa"
  done
  for enc in $big_encodings; do
    echo "$model-$enc --artifact $out/$model-$enc.qfa --fp16-artifact $out/$model-fp16.qfa --random-weights 7 --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --max-new-tokens 128 --profile" \
      >> artifacts/model-runs.txt
  done
done
# What each fusion buys on the Llama-3-8B decode step (--profile).
if [[ " $big_models " == *" llama3-8b "* ]]; then
  for fuse in all none epilogue,shared-input; do
    name="llama3-8b-int4-g128-fuse-$(echo $fuse | tr , _)"
    $compile --fuse=$fuse "$tmp/llama3-8b-int4-g128.mlir" --batch-sizes=$batches \
      -o "$out/$name.qfa"
    echo "$name --artifact $out/$name.qfa --random-weights 7 --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --max-new-tokens 128 --profile" \
      >> artifacts/model-runs.txt
  done
fi
echo "make-model-artifacts: $(ls "$out" | grep -c qfa) artifacts, $(du -sh "$out" | cut -f1)"
