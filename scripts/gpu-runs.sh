#!/usr/bin/env bash
# The runs of artifacts/runs.txt (or the given file) on the GPU machine,
# archived after every run, stopping before a time budget runs out: one
# device call is at most 10 minutes, and results that are only archived at
# the end (scripts/gpu-round.sh) are lost when a call times out.
#
#   scripts/gpu-runs.sh [runs file] [budget seconds, default 540]
#
# Builds the runtime (incrementally) into build-gpu, then writes
# $OUT/runs.tgz (results/<name>.json and .log) and prints a line per run.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# The artifacts travel packed (the device copies at most 64 MiB of tree):
#   tar czf build-pack/artifacts.tgz artifacts
if [ ! -d artifacts ] && [ -f build-pack/artifacts.tgz ]; then
  tar xzf build-pack/artifacts.tgz
fi
runs="${1:-artifacts/runs.txt}"
budget="${2:-540}"
out="${OUT:-$root/gpu-out}"
bench="${QFUSE_BENCH:-build-gpu/bin/qfuse-bench}"
start=$(date +%s)
export QFUSE_GIT_COMMIT="$(cat artifacts/COMMIT 2>/dev/null || echo unknown)"
mkdir -p "$out/results"
if [ -z "${QFUSE_BENCH:-}" ]; then
  cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF \
    -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" --target qfuse-bench \
      > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
failed=0 done_runs=0
while read -r name args; do
  [ -z "$name" ] && continue
  left=$(( budget - ($(date +%s) - start) ))
  if [ "$left" -lt 30 ]; then
    echo "stopped before $name: the budget of ${budget} s is spent"
    failed=1
    break
  fi
  echo "=== $name"
  # shellcheck disable=SC2086
  timeout "$left" $bench $args --json "$out/results/$name.json" \
    > "$out/results/$name.log" 2>&1 || { echo "FAILED: $name"; failed=1; }
  grep -E "FAIL|error" "$out/results/$name.log" | head -3
  tar czf "$out/runs.tgz" -C "$out" results
  done_runs=$((done_runs + 1))
done < "$runs"
echo "$done_runs runs in $(( $(date +%s) - start )) s; failures: $failed"
[ "$failed" -eq 0 ]
