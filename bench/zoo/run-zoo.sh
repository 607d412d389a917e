#!/usr/bin/env bash
# The whole zoo round on the GPU machine, in one call (issue 18, part 1):
# builds qfuse-bench from source without MLIR, then runs every line of the
# zoo's run list -- `qfuse-bench --artifact <entry>-<format>.qfa --batch ...
# --gemm MxNxK ... --check`: every plan checked against the C++ reference
# and timed against cuBLAS fp16 in the same process -- in the list's order
# (bench/zoo/zoo.py plan: waves that cover every format x batch with small
# and large shapes), stopping inside the time budget. Results are archived
# after every run, so a stop still returns what was measured.
#
#   bench/zoo/run-zoo.sh [zoo dir, default .devcarry/zoo] [budget s, default 540]
#
# Run from the repository root (the runtime's source). Writes $OUT/zoo.tgz
# (from $ZOO_WORK, default /tmp/zoo-round)
# (zoo/<run>.json and .log, zoo/manifest.tsv: run, exit code, estimated and
# measured seconds; zoo/runs.txt; zoo/build.log) and prints one line per run.
set -uo pipefail
zoo="${1:-.devcarry/zoo}"
budget="${2:-540}"
out="${OUT:-$PWD/gpu-out}"
start=$(date +%s)
# (only the archive goes to $OUT: at most 8 files come back)
work="${ZOO_WORK:-/tmp/zoo-round}"
res="$work/zoo"
rm -rf "$res"
mkdir -p "$res" "$out"
elapsed() { echo $(( $(date +%s) - start )); }
archive() { tar czf "$out/zoo.tgz" -C "$work" zoo; }
export QFUSE_GIT_COMMIT="$(cat "$zoo/COMMIT" 2>/dev/null || echo unknown)"
nvidia-smi -L > "$res/gpu.txt" 2>&1 || true
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
  --format=csv >> "$res/gpu.txt" 2>&1 || true
cp "$zoo/runs.txt" "$zoo/COMMIT" "$zoo/COMPILE" "$res/" 2>/dev/null
[ -f "$zoo/compile-notes.log" ] && cp "$zoo/compile-notes.log" "$res/"
# make-zoo-artifacts.sh and make-zoo-ab.py pack artifacts.txz; older
# folders artifacts.tgz.
if [ ! -d "$zoo/artifacts" ]; then
  if [ -f "$zoo/artifacts.txz" ]; then xz -dc "$zoo/artifacts.txz" | tar xf - -C "$zoo"
  else tar xzf "$zoo/artifacts.tgz" -C "$zoo"; fi
fi
bench="${QFUSE_BENCH:-build-gpu/bin/qfuse-bench}"
if [ -z "${QFUSE_BENCH:-}" ]; then
  { cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF \
      -DCMAKE_BUILD_TYPE=Release &&
    cmake --build build-gpu -j"$(nproc)" --target qfuse-bench; } \
    > "$res/build.log" 2>&1 || { tail -30 "$res/build.log"; archive; exit 1; }
fi
echo "runtime built in $(elapsed) s"
printf 'run\texit\test_s\tmeasured_s\n' > "$res/manifest.tsv"
done_runs=0 failed=0 skipped=0
while read -r name est args; do
  [ -z "$name" ] && continue
  left=$(( budget - $(elapsed) ))
  # Start a run only when its estimate (x1.25, + 5 s) fits what is left.
  need=$(python3 -c "print(int(float('$est') * 1.25 + 5))")
  if [ "$need" -gt "$left" ]; then
    printf '%s\tnot run (budget: %s s left, %s s needed)\t%s\t-\n' \
      "$name" "$left" "$need" "$est" >> "$res/manifest.tsv"
    skipped=$((skipped + 1))
    continue
  fi
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  # (each log line stamped with the time it was printed: the phases'
  # costs -- quantization, checks, timings -- calibrate zoo.py's COST)
  timeout "$((left - 5))" stdbuf -oL -eL "$bench" $args --json "$res/$name.json" 2>&1 |
    while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done > "$res/$name.log"
  rc=${PIPESTATUS[0]}
  t=$(python3 -c "import time; print(round(time.time() - $t0, 1))")
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$est" "$t" >> "$res/manifest.tsv"
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    echo "FAILED ($rc) $name"; grep -E "FAIL|error" "$res/$name.log" | head -3
  else
    echo "ok $name ${t}s (est ${est}s)"
  fi
  done_runs=$((done_runs + 1))
  archive
done < "$zoo/runs.txt"
echo "$done_runs runs ($failed failed), $skipped not run, in $(elapsed) s"
archive
