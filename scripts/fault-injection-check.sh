#!/usr/bin/env bash
# Device faults on the GPU machine (docs/faults.md): qfuse-quantize and
# qfuse-run with a CUDA driver call made to fail (a launch, a copy, a
# synchronization) or with a small device-memory cap, through the test-only
# BUILD/lib/libqfuse-cuda-fault.so (LD_PRELOAD). Each faulty run must exit
# 1 with a message naming the failed call and what it was doing, leave no
# model.safetensors, --json report or temporary behind, and a quantize run
# must then resume (--resume, no fault) to the checkpoint of a run without
# faults, byte for byte.
#
#   scripts/fault-injection-check.sh BUILD MODEL_DIR [OUT]
#
# MODEL_DIR: as for scripts/quantize-resume-check.sh (`make demo`'s
# build/demo/tiny-llama). Exit status 1 if any check fails.
set -uo pipefail
build="$1"; model="$2"; out="${3:-${OUT:-/tmp}/fault-injection}"
shim="$(cd "$build/lib" && pwd)/libqfuse-cuda-fault.so"
q="$build/bin/qfuse-quantize"; run="$build/bin/qfuse-run"
args=(--model "$model" --encoding int4-g128 --calibration random:32 --seq-len 128 --seed 3)
rm -rf "$out"; mkdir -p "$out"
failed=0
check() { local what="$1"; shift
  if "$@"; then echo "PASS: $what"; else echo "FAIL: $what"; failed=1; fi; }
nothing_left() { # dir: no checkpoint, no report, no temporary
  [ ! -e "$1/model.safetensors" ] && [ ! -e "$1.json" ] &&
    [ -z "$(find "$1" -name '*.partial-*' 2> /dev/null)" ]
}

"$q" "${args[@]}" --out "$out/clean" > "$out/clean.log" 2>&1 \
  || { echo "FAIL: the run without faults"; tail -5 "$out/clean.log"; exit 1; }

quantize_fault() { # name, then VAR=value settings for the shim
  local name="$1"; shift
  local d="$out/q-$name"
  env LD_PRELOAD="$shim" "$@" "$q" "${args[@]}" --out "$d" --json "$d.json" \
    > "$d.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then
    echo "NOTE: quantize $name: the fault was not reached (the run succeeded)"
    return
  fi
  local message; message="$(grep 'error:' "$d.log" | head -1)"
  check "quantize $name: exit $rc, '$message'" \
    grep -qE 'CUDA error|CUDA_ERROR' "$d.log"
  check "quantize $name: no checkpoint, no report, no temporary" nothing_left "$d"
  "$q" "${args[@]}" --out "$d" --resume > "$d.resume.log" 2>&1
  check "quantize $name: resumed to the run without faults, byte for byte" \
    cmp -s "$out/clean/model.safetensors" "$d/model.safetensors"
}
quantize_fault launch-1 QFUSE_CUDA_FAULT=cuLaunchKernel:1
quantize_fault launch-400 QFUSE_CUDA_FAULT=cuLaunchKernel:400
quantize_fault sync-30 QFUSE_CUDA_FAULT=cuStreamSynchronize:30
quantize_fault copy-back-3 QFUSE_CUDA_FAULT=cuMemcpyDtoH_v2:3:999
quantize_fault upload-20 QFUSE_CUDA_FAULT=cuMemcpyHtoDAsync_v2:20
quantize_fault alloc-40-oom QFUSE_CUDA_FAULT=cuMemAlloc_v2:40:2
for mb in 8 32 128; do
  quantize_fault "cap-${mb}mb" QFUSE_CUDA_MEMORY_LIMIT=$((mb << 20))
done

run_fault() { # name, then VAR=value settings
  local name="$1"; shift
  local j="$out/run-$name.json"
  env LD_PRELOAD="$shim" "$@" "$run" --model "$model" --encoding int4-g128 \
    --prompt-ids 5,17,300,42,7 --max-new-tokens 16 --json "$j" > "$out/run-$name.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] && { echo "NOTE: run $name: the fault was not reached"; return; }
  check "run $name: exit $rc, '$(grep 'error:' "$out/run-$name.log" | head -1)'" \
    grep -qE 'CUDA error|CUDA_ERROR' "$out/run-$name.log"
  check "run $name: no --json report" test ! -e "$j"
}
run_fault launch-50 QFUSE_CUDA_FAULT=cuLaunchKernel:50
run_fault graph-3 QFUSE_CUDA_FAULT=cuGraphLaunch:3
run_fault copy-back-2 QFUSE_CUDA_FAULT=cuMemcpyDtoH_v2:2
run_fault cap-4mb QFUSE_CUDA_MEMORY_LIMIT=$((4 << 20))
exit $failed
