#!/usr/bin/env bash
# Compiles what one GPU round measures (runs here, where the compiler is):
# per-projection artifacts and whole decode steps of the reference models,
# plus artifacts/runs.txt, one qfuse-bench argument line per run, which
# scripts/gpu-round.sh executes on the GPU machine.
#
#   bench/make-artifacts.sh [build-dir] [batch sizes, default "1"] [tuning db]
#   (MODELS="llama3-8b" ENCODINGS="sparse24-f16" narrow the set; KEEP=1
#   adds to the artifacts and runs.txt already there, so that one round can
#   measure different batch lists per encoding; EXTRAS=none leaves out the
#   checked runs of the test inputs and examples after the model shapes)
#
# The tuning database (default bench/tuning-db.json, measured by
# bench/tune.py; "none" for the cost model alone) overrides the model's
# tiling for the shapes it lists.
set -euo pipefail
build="${1:-build}"
batches="${2:-1}"
db="${3:-bench/tuning-db.json}"
compile="$build/bin/qfuse-compile"
if [ "$db" != none ]; then compile="$compile --tuning-db=$db"; fi
ir="python3 bench/decode_step_ir.py"
out=artifacts
if [ -z "${KEEP:-}" ]; then rm -rf "$out"; fi
mkdir -p "$out/shapes" "$out/steps"
git rev-parse --short HEAD > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
echo "tuning database: $db" > "$out/TUNING"
runs="$out/runs.txt"
if [ -z "${KEEP:-}" ]; then : > "$runs"; fi

models="${MODELS:-llama3-8b qwen2.5-1.5b}"
encodings="${ENCODINGS:-int4-g128 nf4}"
for model in $models; do
  for enc in $encodings; do
    for batch in $batches; do
      checked=() gemms=() lmhead=""
      # The default fusions (q/k/v as one launch, gate/up with silu_mul,
      # residual epilogues) at every batch: both kernels take them. FUSE
      # overrides (FUSE=--fuse=none measures the unfused step).
      fuse="${FUSE:-}"
      # (an override is part of the name: FUSE=--fuse=none -> "-fuse-none")
      tag="${FUSE:+-$(echo "$FUSE" | tr -c 'a-z0-9\n' '-' | sed 's/^-*//')}"
      while read -r name n k; do
        base="$model-$enc$tag-$name-b$batch"
        $ir --model "$model" --encoding "$enc" --batch "$batch" --only "$name" \
          -o "$out/shapes/$base.mlir"
        $compile $fuse "$out/shapes/$base.mlir" -o "$out/shapes/$base.qfa"
        gemms+=(--gemm "${batch}x${n}x${k}")
        # (the cuBLAS baseline of each shape runs in the same process)
        # lm_head's half a billion weights take a minute to quantize on the
        # host: it is timed on random placeholder codes instead of checked.
        if [ "$name" = lm_head ]; then
          lmhead="--gemm ${batch}x${n}x${k} --artifact $out/shapes/$base.qfa"
        else checked+=(--artifact "$out/shapes/$base.qfa"); fi
      done < <($ir --model "$model" --list-shapes)
      echo "$model-$enc$tag-shapes-b$batch ${gemms[*]} ${checked[*]} --check" >> "$runs"
      echo "$model-$enc$tag-lm_head-b$batch $lmhead --placeholder-weights" >> "$runs"
      step="$out/steps/$model-$enc$tag-b$batch"
      $ir --model "$model" --encoding "$enc" --batch "$batch" --full-step -o "$step.mlir"
      $compile $fuse "$step.mlir" -o "$step.qfa"
      echo "$model-$enc$tag-step-b$batch --model $model --batch $batch --artifact $step.qfa --placeholder-weights" >> "$runs"
    done
  done
done
if [ "${EXTRAS:-all}" = none ]; then
  rm -f "$out"/shapes/*.mlir "$out"/steps/*.mlir
  echo "make-artifacts: $(wc -l < "$runs") runs, $(du -sh "$out" | cut -f1)"
  exit 0
fi
# Every format the generator lowers, at batch 1, 2, 4 and 8, checked.
$compile test/Tools/qfuse-compile/Inputs/formats.mlir --batch-sizes=1,2,4,8 \
  -o "$out/formats.qfa"
echo "formats-m1to8 --artifact $out/formats.qfa --check" >> "$runs"
# The same with the matvec at every batch up to 8 (--tensor-core-min-batch
# 9): at 8 it is still the kernel of what the tensor-core kernel refuses.
$compile test/Tools/qfuse-compile/Inputs/formats.mlir --batch-sizes=8 \
  --tensor-core-min-batch=9 -o "$out/formats-matvec.qfa"
echo "formats-matvec-m8 --artifact $out/formats-matvec.qfa --check" >> "$runs"
# Every format the tensor-core generator lowers, from the crossover (8) up.
$compile test/Tools/qfuse-compile/Inputs/mma-formats.mlir \
  --batch-sizes=8,9,16,17,64,128,512 -o "$out/mma-formats.qfa"
echo "mma-formats-m8to512 --artifact $out/mma-formats.qfa --check" >> "$runs"
# The same formats and fusions with bf16 activations, which only the
# tensor-core kernel reads: it runs them at every batch, 1 included.
$compile test/Tools/qfuse-compile/Inputs/mma-bf16.mlir \
  --batch-sizes=1,9,16,17,64,128,512 -o "$out/mma-bf16.qfa"
echo "mma-bf16-m1to512 --artifact $out/mma-bf16.qfa --check" >> "$runs"
# The wgmma (sm_90a) variant on explicit tilings, every format.
$build/bin/qfuse-compile test/Tools/qfuse-compile/Inputs/wgmma.mlir --chip=sm_90a \
  -o "$out/wgmma.qfa"
echo "wgmma-m77-128 --artifact $out/wgmma.qfa --check" >> "$runs"
# Shapes that are not whole tiles (odd N, K past whole steps), padded.
$compile test/Tools/qfuse-compile/Inputs/mma-odd.mlir \
  --batch-sizes=9,16,17,64,128,512 -o "$out/mma-odd.qfa"
echo "mma-odd-m9to512 --artifact $out/mma-odd.qfa --check" >> "$runs"
# The tensor-core kernel's fusions on argument inputs, checked launch by
# launch (the silu_mul epilogue is written fused in the input).
$compile test/Tools/qfuse-compile/Inputs/mma-fused.mlir \
  --batch-sizes=16,64 -o "$out/mma-fused.qfa"
echo "mma-fused-m16-64 --artifact $out/mma-fused.qfa --check" >> "$runs"
# Every packed weight type of the dialect's round-trip tests at every batch
# size, fused or through the dequantize + cuBLAS fallback (issue 20).
$compile test/Tools/qfuse-compile/Inputs/every-encoding.mlir \
  --batch-sizes=1,3,8,17,100,512 -o "$out/every-encoding.qfa"
echo "every-encoding-m1to512 --artifact $out/every-encoding.qfa --check" >> "$runs"
# The GPTQ block kernels, one per grid (scripts/gpu-round.sh runs
# qfuse-gptq-check on it: bit for bit against the CPU reference).
$compile test/Tools/qfuse-compile/Inputs/gptq-blocks.mlir -o "$out/gptq-blocks.qfa"
# Every fusion checked launch by launch (a matmul behind a norm launch on
# the input that launch left; epilogues are listed as skipped);
# bench/make-model-artifacts.sh checks whole models.
$compile test/Tools/qfuse-compile/Inputs/fused-ops.mlir --fuse=all \
  --batch-sizes=1,3,8 -o "$out/fused-ops.qfa"
echo "fused-ops-m1to8 --artifact $out/fused-ops.qfa --check" >> "$runs"
# The example layers of `make demo`, checked at every compiled batch size.
for f in examples/*.mlir; do
  name="$(basename "$f" .mlir)"
  $compile "$f" --batch-sizes=1,2,4,8 -o "$out/$name.qfa"
  echo "example-$name --artifact $out/$name.qfa --check" >> "$runs"
done
rm -f "$out"/shapes/*.mlir "$out"/steps/*.mlir
echo "make-artifacts: $(ls "$out"/shapes "$out"/steps | grep -c qfa) artifacts, $(wc -l < "$runs") runs, $(du -sh "$out" | cut -f1)"
