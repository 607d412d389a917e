#!/usr/bin/env bash
# The GPTQ part of a GPU round, on the GPU machine: builds the GPTQ tools
# from source (no MLIR), then runs every line of artifacts/gptq/runs.txt
# (bench/make-gptq-artifacts.sh) through qfuse-gptq-layer: whole layers
# through the GPU solver against the C++ reference and the eager path, and
# the Llama-3-8B layer's timing. Logs and JSON go to $OUT/gptq.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${OUT:-$root/gpu-out}/gptq"
mkdir -p "$out"
if [ ! -x build-gpu/bin/qfuse-gptq-layer ] || [ "${QFUSE_REBUILD:-1}" = 1 ]; then
  cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF \
    -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 \
    || { tail -30 "$out/configure.log"; exit 1; }
  cmake --build build-gpu -j"$(nproc)" --target qfuse-gptq-layer \
    qfuse-quantize qfuse-run qfuse-synthetic-model qfuse-runtime-gpu-tests \
    > "$out/build.log" 2>&1 \
    || { tail -40 "$out/build.log"; exit 1; }
fi
failed=0
# Calibration (the Hessians of every layer through the fp16 artifact)
# against the reference decoder's inputs.
[ "${QFUSE_GPTQ_QUICK:-0}" = 1 ] || {
echo "=== calibration"
build-gpu/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='CalibrationGpu*' > "$out/calibration-tests.log" 2>&1 || failed=1
grep -E "^\[  (PASSED|FAILED) |FAILED|Skipped|error" "$out/calibration-tests.log" | head
}
while read -r name args; do
  [ -z "$name" ] && continue
  echo "=== gptq $name"
  eval "build-gpu/bin/qfuse-gptq-layer $args --json '$out/gptq-layer-$name.json'" \
    > "$out/gptq-layer-$name.log" 2>&1 || failed=1
  grep -E "FAIL|error|fused vs eager|in all|gptq-layer " "$out/gptq-layer-$name.log" | head -20
done < "${QFUSE_GPTQ_RUNS:-artifacts/gptq/runs.txt}"
# End to end on the synthetic tiny Llama: GPTQ into each output format, then
# generation from the result with the int4-g128 decode artifact.
tiny=artifacts/gptq/tiny-llama
if [ -d "$tiny" ] && [ "${QFUSE_GPTQ_QUICK:-0}" != 1 ]; then
  model="$(mktemp -d)/tiny-llama"
  build-gpu/bin/qfuse-synthetic-model --config-preset tiny-llama --out "$model" \
    --seed 1 > /dev/null
  cp "$tiny"/*.qfa "$model/"
  for fmt in qfuse compressed-tensors auto-gptq; do
    echo "=== quantize tiny-llama ($fmt)"
    dest="$(dirname "$model")/gptq-$fmt"
    build-gpu/bin/qfuse-quantize --model "$model" --encoding int4-g128 \
      --calibration random:64 --seq-len 128 --out "$dest" --format "$fmt" \
      --json "$out/quantize-$fmt.json" > "$out/quantize-$fmt.log" 2>&1 || failed=1
    tail -4 "$out/quantize-$fmt.log"
    cp "$tiny/qfuse-int4-g128.qfa" "$dest/" 2>/dev/null
    build-gpu/bin/qfuse-run --model "$dest" --encoding int4-g128 \
      --prompt-ids 5,17,300,42 --max-new-tokens 16 > "$out/run-$fmt.log" 2>&1 || failed=1
    grep -E "tokens|error" "$out/run-$fmt.log" | head -3
  done
  # Does GPTQ beat round-to-nearest on the whole model? Logits of the int4
  # model against the dense fp16 reference decoder, the same random-token
  # prompt (the calibration's distribution), RTN at load against the GPTQ
  # checkpoint written above.
  prompt=5,17,300,42,7,1000,3,64,128,9,11,250,600,77,31,900
  for q in rtn gptq; do
    extra=""
    [ $q = gptq ] && extra="--gpu-weights $(dirname "$model")/gptq-qfuse"
    # shellcheck disable=SC2086
    build-gpu/bin/qfuse-model-check --model "$model" \
      --artifact "$tiny/qfuse-int4-g128.qfa" --prompt-ids $prompt --steps 32 \
      --dense-reference --tolerance 1 $extra \
      --json "$out/model-quality-$q.json" > "$out/model-quality-$q.log" 2>&1 || failed=1
    echo "$q: $(tail -1 "$out/model-quality-$q.log")"
  done
fi
tar czf "$out/../gptq-results.tgz" -C "$out" . 2>/dev/null
echo "gptq round: failures $failed"
