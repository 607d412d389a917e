#!/usr/bin/env bash
# The tiled-attention round on the GPU machine (README.md): the tensor-core
# attention (new) checked against the reference decoder, then plan profiles
# of the old and the new artifacts. Carried as build-tiled/gpu.sh:
#
#   bash build-tiled/gpu.sh          # results under $OUT/tiled, and tiled.tgz
set -u
R=$(cd "$(dirname "$0")" && pwd)
A=$R/art
out=${OUT:-/tmp/out}/tiled
mkdir -p "$out"
b=/tmp/qb-tiled
log() { echo "[$(date +%T)] $*"; }
finish() { tar -C "$(dirname "$out")" -czf "$out.tgz" "$(basename "$out")"; }
trap finish EXIT
ids() { python3 -c "print(','.join(str($1 + $2 * i % $3) for i in range($4)))"; }

log "build (runtime only)"
cmake -G Ninja -S "$R/src" -B $b -DQFUSE_ENABLE_COMPILER=OFF \
  -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
cmake --build $b -j"$(nproc)" --target qfuse-synthetic-model qfuse-model-check \
  qfuse-run > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

log "models: the synthetic tiny Llama and Llama-3-8B's attention (random)"
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out /tmp/tiny --seed 1 > /dev/null
cmp -s /tmp/tiny/config.json "$A/tiny-llama/config.json" || echo "tiny-llama: config differs from the compiled one"
$b/bin/qfuse-synthetic-model --config "$A/l8attn/config.json" --out /tmp/l8attn --seed 1 > /dev/null

# check NAME MODEL ARTIFACT PROMPT-IDS [qfuse-model-check options]: outputs
# poisoned (NaN) before the run, 8 decode steps after the prompt.
check() {
  local name=$1 model=$2 art=$3 prompt=$4; shift 4
  timeout 200 $b/bin/qfuse-model-check --model "$model" --artifact "$art" \
    --prompt-ids "$prompt" --steps 8 --poison-outputs --json "$out/check-$name.json" "$@" \
    > "$out/check-$name.log" 2>&1
  echo "check $name (rc $?): $(tail -1 "$out/check-$name.log" | sed 's|.*: 8 steps, ||')"
}

log "correctness: Llama-3-8B attention shapes, plans 1, 64, 512; a 1072-token prompt = chunks of 512, 512 and 64 (48 real)"
p1072=$(ids 3 7 1000 1072)
# The reference decoder runs on the host (one core each): both in parallel.
check l8attn-new /tmp/l8attn "$A/l8attn/new-fp16.qfa" "$p1072" & l8new=$!
check l8attn-old /tmp/l8attn "$A/l8attn/old-fp16.qfa" "$p1072" & l8old=$!

log "correctness: tiny Llama, plans 1, 32, 128; a 150-token prompt = chunks of 128 and 32 (22 real)"
p150=$(ids 3 7 1000 150)
for v in new old; do
  for enc in fp16 int4-g128; do
    check tiny-$enc-$v /tmp/tiny "$A/tiny-llama/$v-$enc.qfa" "$p150"
  done
done
wait $l8new $l8old

log "profiles: Llama-3-8B fp16, random weights, plan of N rows by part, old / new"
# A prompt of P tokens leaves the plan's buffers at its last chunk: rows at
# positions P - N .. P - 1 (2048: the last chunk of a 2048-token sequence).
for case in 512:512 512:2048 64:2048 32:2048; do
  n=${case%%:*}; p=${case##*:}
  for v in old new; do
    timeout 90 $b/bin/qfuse-run --random-weights 1 --artifact "$A/prof/$v-$n.qfa" \
      --prompt-ids "$(ids 7 13 120000 $p)" --max-new-tokens 1 --profile-batch $n \
      --json "$out/profile-$v-$n-p$p.json" > "$out/profile-$v-$n-p$p.log" 2>&1
    echo "$v batch $n, prompt $p (rc $?): $(grep -E 'by part|rror' "$out/profile-$v-$n-p$p.log" | sed 's/; each part.*://')"
  done
done

# racecheck: the two-slot ring's cp.async writes against the ldmatrix reads
# of the other slot (SANITIZE=0 skips it).
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ "${SANITIZE:-1}" = 1 ] && [ -x "$cs" ]; then
  log "racecheck: Llama-3-8B attention, plan 512 (a 100-token prompt padded to 512 rows: up to 8 key tiles a block)"
  timeout 60 "$cs" --tool racecheck --error-exitcode 9 $b/bin/qfuse-model-check \
    --model /tmp/l8attn --artifact "$A/l8attn/new-fp16.qfa" --prompt-ids "$(ids 3 7 1000 100)" \
    --steps 1 > "$out/racecheck-l8attn.log" 2>&1
  echo "racecheck (rc $?): $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck-l8attn.log" | head -1)"
fi
log done
