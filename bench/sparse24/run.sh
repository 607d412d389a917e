#!/usr/bin/env bash
# The 2:4 GPU round on the GPU machine: builds qfuse-bench from the runtime
# source (no MLIR) unless QFUSE_BENCH names one, then runs every line of the
# carried runs.txt (bench/sparse24/make-artifacts.sh): per shape, every
# format's plans checked against the C++ reference on random weights and
# inputs (--check) and timed beside dense int4-g128 and cuBLAS fp16 in the
# same process, one JSON per run; then summarize.py writes summary.json and
# a table: per shape and batch, x cuBLAS fp16 and x dense int4, and whether
# the targets hold at batches 1-64 (2:4 + int4 >= 1.25x dense int4, 2:4 f16
# >= 1.5x cuBLAS fp16).
#
#   bench/sparse24/run.sh [carried dir, default build-sparse24]
#
# Run from the repository root. Writes $OUT/sparse24.tgz (default OUT
# ./gpu-out): sparse24/<run>.json and .log, manifest.tsv, summary.json.
set -uo pipefail
dir="${1:-build-sparse24}"
out="${OUT:-$PWD/gpu-out}"
work="${SPARSE24_WORK:-/tmp/sparse24-round}"
res="$work/sparse24"
rm -rf "$res"
mkdir -p "$res" "$out"
archive() { tar czf "$out/sparse24.tgz" -C "$work" sparse24; }
export QFUSE_GIT_COMMIT="$(cat "$dir/COMMIT" 2>/dev/null || echo unknown)"
nvidia-smi -L > "$res/gpu.txt" 2>&1 || true
cp "$dir/runs.txt" "$dir/COMMIT" "$dir/COMPILE" "$dir/compile.log" "$res/" 2>/dev/null
bench="${QFUSE_BENCH:-$PWD/build-gpu/bin/qfuse-bench}"
if [ -z "${QFUSE_BENCH:-}" ]; then
  { cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF \
      -DCMAKE_BUILD_TYPE=Release &&
    cmake --build build-gpu -j"$(nproc)" --target qfuse-bench; } \
    > "$res/build.log" 2>&1 || { tail -30 "$res/build.log"; archive; exit 1; }
fi
printf 'run\texit\tseconds\n' > "$res/manifest.tsv"
failed=0
while read -r name args; do
  [ -z "$name" ] && continue
  t0=$(date +%s)
  # shellcheck disable=SC2086 # (the run's arguments, paths relative to $dir)
  (cd "$dir" && "$bench" $args --json "$res/$name.json") > "$res/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> "$res/manifest.tsv"
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1)); echo "FAILED ($rc) $name"; grep -E "FAIL|error" "$res/$name.log" | head -3
  else
    echo "ok $name"
  fi
  archive
done < "$dir/runs.txt"
python3 "$dir/summarize.py" "$res" > "$res/summary.txt" 2>&1 || failed=$((failed + 1))
cat "$res/summary.txt"
archive
echo "$failed failed"
[ "$failed" -eq 0 ]
