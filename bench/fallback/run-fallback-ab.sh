#!/usr/bin/env bash
# The fallback A/B on the GPU machine (bench/fallback/make-fallback-ab.py
# compiled it): each line of runs.txt is one qfuse-bench process, the
# artifact's plans and cuBLAS fp16 at the same shapes timed in it. Results go
# to $OUT/fallback.tgz.
#
#   bench/fallback/run-fallback-ab.sh [dir, default .devcarry/fallback] [qfuse-bench]
set -uo pipefail
dir="${1:-.devcarry/fallback}"
bench="${2:-build-gpu/bin/qfuse-bench}"
out="${OUT:-$PWD/gpu-out}"
res="$(mktemp -d)/fallback"
mkdir -p "$res" "$out"
cp "$dir/runs.txt" "$dir/COMPILE" "$dir/COMMIT" "$res/" 2>/dev/null
export QFUSE_GIT_COMMIT="$(cat "$dir/COMMIT" 2>/dev/null || echo unknown)"
while read -r name args; do
  [ -z "$name" ] && continue
  # shellcheck disable=SC2086
  "$bench" $args --json "$res/$name.json" > "$res/$name.log" 2>&1 \
    || echo "$name FAILED: $(tail -2 "$res/$name.log")"
done < "$dir/runs.txt"
tar czf "$out/fallback.tgz" -C "$(dirname "$res")" fallback
echo "fallback A/B: $(ls "$res"/*.json 2>/dev/null | wc -l) results"
