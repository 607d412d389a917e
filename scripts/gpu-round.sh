#!/usr/bin/env bash
# One GPU round, end to end, on the GPU machine (../shared/notes/gpu-machine.md):
# build the runtime from source without MLIR, run the unit and GPU tests,
# then every run in artifacts/runs.txt (written by bench/make-artifacts.sh on
# the compiler machine): correctness checks and timings against cuBLAS fp16,
# each in one process. Logs and JSON go to $OUT (default ./gpu-out); a short
# table comes last. ONLY="ctest runs capi models gptq model-runs demo hf
# sanitize" (any subset) runs just those parts: a whole round takes longer
# than one 10-minute command on the GPU machine. `hf` and `sanitize` run
# what bench/make-gpu-checks.sh compiled into $GPU_CHECKS (default
# .devcarry/gpu-checks, carried from the compiler machine).
set -uo pipefail
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${OUT:-$root/gpu-out}"
mkdir -p "$out/results"
export QFUSE_GIT_COMMIT="$(cat artifacts/COMMIT 2>/dev/null || echo unknown)"
nvidia-smi -L || true

cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
  -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
# BUILD_TARGETS narrows the build to what the chosen parts run (e.g.
# "qfuse-bench qfuse-run qfuse-gptq-check qfuse_c" for ONLY="hf sanitize").
# shellcheck disable=SC2086
cmake --build build-gpu -j"$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} \
  > "$out/build.log" 2>&1 \
  || { tail -40 "$out/build.log"; exit 1; }
ctest_rc=0
if want ctest; then
  ctest --test-dir build-gpu --output-on-failure -L 'unit|gpu' \
    > "$out/ctest.log" 2>&1
  ctest_rc=$?
  grep -E "tests passed|tests failed|Failed|SKIP" "$out/ctest.log" | tail -15
fi

failed=0
if want runs && [ -f artifacts/runs.txt ]; then
  while read -r name args; do
    [ -z "$name" ] && continue
    echo "=== $name"
    # shellcheck disable=SC2086
    build-gpu/bin/qfuse-bench $args --json "$out/results/$name.json" \
      > "$out/results/$name.log" 2>&1 || failed=1
    grep -E "FAIL|error" "$out/results/$name.log" | head -5
  done < artifacts/runs.txt
fi
# The C API end to end (what the Python frontend will bind).
want capi && for a in artifacts/llama3-8b-attention-proj.qfa artifacts/qwen2-mlp-nf4.qfa; do
  [ -f "$a" ] || continue
  build-gpu/bin/qfuse-c-example "$a" >> "$out/results/c-api.log" 2>&1 || failed=1
done
[ -f "$out/results/c-api.log" ] && cat "$out/results/c-api.log"
# Whole models (bench/make-model-artifacts.sh): each tiny synthetic model is
# written here, as a real checkpoint, then checked against the reference
# decoder over 32 decode steps; the big shapes are timed against fp16.
if want models && [ -f artifacts/models.txt ]; then
  models="$(mktemp -d)"
  while read -r name preset artifact extra; do
    [ -z "$name" ] && continue
    [ -d "$models/$preset" ] || build-gpu/bin/qfuse-synthetic-model \
      --config-preset "$preset" --out "$models/$preset" --seed 1 > /dev/null
    # shellcheck disable=SC2086
    build-gpu/bin/qfuse-model-check --model "$models/$preset" \
      --artifact "$artifact" --prompt-ids 5,17,300,42,7,1000,3,64,128,9,11 \
      --steps 32 $extra --json "$out/results/model-check-$name.json" \
      > "$out/results/model-check-$name.log" 2>&1 || failed=1
    tail -1 "$out/results/model-check-$name.log"
  done < artifacts/models.txt
fi
# The GPTQ block kernels against the CPU reference column loop, bit for bit
# (one PASS/FAIL line per grid; bench/make-artifacts.sh compiles them).
if want gptq && [ -f artifacts/gptq-blocks.qfa ]; then
  echo "=== gptq-blocks"
  build-gpu/bin/qfuse-gptq-check --artifact artifacts/gptq-blocks.qfa \
    > "$out/results/gptq-check.log" 2>&1 || failed=1
  grep -E "FAIL|error|launches passed" "$out/results/gptq-check.log"
fi
if want model-runs && [ -f artifacts/model-runs.txt ]; then
  while read -r name args; do
    [ -z "$name" ] && continue
    echo "=== model $name"
    # shellcheck disable=SC2086
    build-gpu/bin/qfuse-run $args --json "$out/results/model-run-$name.json" \
      > "$out/results/model-run-$name.log" 2>&1 || failed=1
    grep -E "tokens/s|speedup|error" "$out/results/model-run-$name.log" | head -6
  done < artifacts/model-runs.txt
fi
# `make demo`'s GPU half on the demo compiled on the compiler machine
# (copied to artifacts/demo): text prompts, chat, sampling, GPTQ.
if want demo && [ -d artifacts/demo ]; then
  echo "=== demo"
  scripts/demo-run.sh build-gpu artifacts/demo > "$out/results/demo.log" 2>&1 \
    || { failed=1; echo "demo FAILED"; }
  tail -4 "$out/results/demo.log"
fi
# Numerics against transformers (issue 21 part 5, docs/decode-model.md
# section 6): each architecture built by transformers from
# bench/hf-check/configs, saved as a checkpoint, run teacher-forced through
# the fp16 and int4-g128 artifacts and compared with transformers in fp32.
checks="${GPU_CHECKS:-.devcarry/gpu-checks}"
if want hf && [ -d "$checks/hf" ]; then
  echo "=== hf-check"
  QFUSE_GIT_COMMIT="$(cat "$checks/COMMIT" 2>/dev/null || echo "$QFUSE_GIT_COMMIT")" \
  python3 bench/hf-check/hf_check.py --artifacts "$checks/hf" \
    --work "${HF_WORK:-/tmp/hf-check}" --out "$out/results/hf-check" \
    --lib build-gpu/lib/libqfuse_c.so > "$out/results/hf-check.log" 2>&1 \
    || { failed=1; echo "hf-check FAILED"; }
  sed -n '/^model /,$p' "$out/results/hf-check.log"
  grep -E "Error|error:" "$out/results/hf-check.log" | tail -5
fi
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on one small
# plan of every kernel family (issue 22 part 4, bench/sanitize/README.md).
if want sanitize && [ -d "$checks/sanitize" ]; then
  echo "=== sanitize"
  python3 bench/sanitize/run-sanitize.py --dir "$checks/sanitize" \
    --bin build-gpu/bin --out "$out/results/sanitize" \
    --budget "${SANITIZE_BUDGET:-300}" \
    > "$out/results/sanitize.log" 2>&1 || { failed=1; echo "sanitize FAILED"; }
  sed -n '/^sanitizer errors/,$p' "$out/results/sanitize.log"
  grep -E "run-sanitize: (missing|compute|unknown)" "$out/results/sanitize.log"
fi
tar czf "$out/results.tgz" -C "$out" results
echo "ctest exit $ctest_rc, bench failures $failed"
python3 bench/summarize.py "$out/results" || true
[ "$ctest_rc" -eq 0 ] && [ "$failed" -eq 0 ]
