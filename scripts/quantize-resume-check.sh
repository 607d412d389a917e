#!/usr/bin/env bash
# qfuse-quantize --resume on the GPU machine (docs/faults.md): the model is
# quantized once whole, then once per layer l killed (SIGKILL) right after
# layer l's progress is recorded and resumed; every resumed checkpoint must
# equal the whole run's byte for byte (model.safetensors and configs) with
# identical per-module losses, the killed run must leave no model.safetensors,
# and the progress must be gone once written. Then a run killed from outside
# at a random moment is resumed the same way, and resumes with other inputs
# or without --resume are refused.
#
#   scripts/quantize-resume-check.sh BUILD MODEL_DIR [OUT]
#
# MODEL_DIR: a checkpoint with qfuse-fp16-calib.qfa, qfuse-gptq-int4-g128.qfa
# and qfuse-int4-g128.qfa beside it (`make demo` writes one:
# build/demo/tiny-llama). Exit status 1 if any check fails.
set -uo pipefail
build="$1"; model="$2"; out="${3:-${OUT:-/tmp}/quantize-resume}"
q="$build/bin/qfuse-quantize"
root="$(cd "$(dirname "$0")/.." && pwd)"
inputs=(--model "$model" --encoding int4-g128 --calibration random:32 --seq-len 128)
common=("${inputs[@]}" --seed 3)
rm -rf "$out"; mkdir -p "$out"
failed=0
check() { # description, then a command that must succeed
  local what="$1"; shift
  if "$@"; then echo "PASS: $what"; else echo "FAIL: $what"; failed=1; fi
}
same_checkpoint() { # dir: equal to the whole run's, progress removed
  cmp -s "$out/whole/model.safetensors" "$1/model.safetensors" &&
    cmp -s "$out/whole/config.json" "$1/config.json" && [ ! -e "$1/.qfuse-progress" ]
}

"$q" "${common[@]}" --out "$out/whole" --json "$out/whole.json" > "$out/whole.log" 2>&1 \
  || { echo "FAIL: the whole run"; tail -5 "$out/whole.log"; exit 1; }
layers=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['layers']))" \
  "$out/whole.json")
echo "whole run: $layers layers, sha256 $(sha256sum < "$out/whole/model.safetensors" | cut -c1-16)"

for ((kill = 0; kill < layers; kill++)); do
  d="$out/killed-after-$kill"
  QFUSE_TEST_KILL_AFTER_LAYER=$kill "$q" "${common[@]}" --out "$d" > "$d.log" 2>&1
  check "killed after layer $kill (exit $?, 137 expected), no model.safetensors" \
    test ! -e "$d/model.safetensors" -a -f "$d/.qfuse-progress/manifest.json"
  "$q" "${common[@]}" --out "$d" --resume --json "$d.json" > "$d.resume.log" 2>&1
  check "resumed after layer $kill: $(grep -o 'resuming[^;]*' "$d.resume.log" | head -1)" \
    grep -q "resuming" "$d.resume.log"
  check "resumed after layer $kill: the whole run's checkpoint, byte for byte" \
    same_checkpoint "$d"
  check "resumed after layer $kill: $(python3 "$root/scripts/gptq-compare-losses.py" \
    "$out/whole.json" "$d.json")" python3 "$root/scripts/gptq-compare-losses.py" \
    "$out/whole.json" "$d.json" > /dev/null
done

# Killed from outside once the first layer is recorded, wherever it is then.
d="$out/killed-outside"
"$q" "${common[@]}" --out "$d" > "$d.log" 2>&1 &
pid=$!
while kill -0 $pid 2> /dev/null && [ ! -f "$d/.qfuse-progress/manifest.json" ]; do
  sleep 0.01
done
kill -KILL $pid 2> /dev/null; wait $pid 2> /dev/null
if [ -e "$d/model.safetensors" ]; then
  echo "NOTE: the run finished before it could be killed; nothing to resume"
else
  "$q" "${common[@]}" --out "$d" --resume > "$d.resume.log" 2>&1
  check "killed from outside, resumed: the whole run's checkpoint" same_checkpoint "$d"
fi

# Refusals: other inputs, or progress without --resume.
d="$out/refused"
QFUSE_TEST_KILL_AFTER_LAYER=0 "$q" "${common[@]}" --out "$d" > /dev/null 2>&1
"$q" "${inputs[@]}" --seed 4 --out "$d" --resume > "$d.seed.log" 2>&1
check "a resume with another seed is refused, naming it" \
  grep -q "seed: '3' in the progress, '4' now" "$d.seed.log"
"$q" "${common[@]}" --out "$d" > "$d.again.log" 2>&1
check "a run over progress without --resume is refused" \
  grep -q "pass --resume to continue it" "$d.again.log"
check "the refused runs wrote nothing" test ! -e "$d/model.safetensors"
exit $failed
