#!/usr/bin/env bash
# The measured crossover (CostModel.cpp: tensorCoreMinMFor) checked on
# the zoo, which it was not set on: zoo shapes at batches 1-8, each format
# compiled the default way (`-new`) and with a previous rule (`-old`:
# OLD_FLAGS, default --tensor-core-min-batch=4, which keeps the matvec
# below 8 on weights under the size bound; OLD_FLAGS= set empty compiles
# `-old` the default way), both --chip=sm_90a without a
# tuning database. ENTRIES, FORMATS and BATCHES choose the zoo shapes, the
# formats and the batches (any rule with a flag can be checked the same way:
# OLD_FLAGS=--wgmma-min-rows=4096 BATCHES=96,128,256 for the wgmma row
# bound; CHIP, default sm_90a, the target; NEW_FLAGS, default none, flags
# of the `-new` compile). Writes a folder bench/zoo/run-zoo.sh runs (every plan checked and
# timed against cuBLAS fp16 in the same process).
#
#   bench/crossover/make-zoo-check.sh [build dir] [out dir]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
out="${2:-build-xzoo}"
compile="$(cd "$build" && pwd)/bin/qfuse-compile"
batches="${BATCHES:-1,2,3,4,5,6,7,8}"
entries="${ENTRIES:-s1024x8192 s8192x2048 s2048x3584 s2048x11008}"
formats="${FORMATS:-int4-g128 uint4-g32-asym nvfp4 int8}"
rm -rf "$out"; mkdir -p "$out/artifacts"
git -C "$here" rev-parse --short HEAD > "$out/COMMIT"
old_flags="${OLD_FLAGS---tensor-core-min-batch=4}"
new_flags="${NEW_FLAGS:-}"
chip="${CHIP:-sm_90a}"
echo "qfuse-compile <entry>-<format>.mlir --batch-sizes=$batches --chip=$chip: -new default${new_flags:+ with $new_flags}, -old $old_flags (no --tuning-db)" > "$out/COMPILE"
: > "$out/runs.txt"
for e in $entries; do
  for fmt in $formats; do
    f="$out/artifacts/$e-$fmt.mlir"
    python3 "$here/../zoo/zoo.py" emit "$e" "$fmt" > "$f"
    n=$(grep -o 'weight<[0-9]*x[0-9]*' "$f" | head -1 | sed 's/weight<//; s/x.*//')
    k=$(grep -o 'weight<[0-9]*x[0-9]*' "$f" | head -1 | sed 's/.*x//')
    "$compile" "$f" --batch-sizes=$batches --chip=$chip $new_flags -o "${f%.mlir}-new.qfa"
    "$compile" "$f" --batch-sizes=$batches --chip=$chip $old_flags -o "${f%.mlir}-old.qfa"
    rm "$f"
    gemms=""; for b in ${batches//,/ }; do gemms="$gemms --gemm ${b}x${n}x${k}"; done
    for v in new old; do
      echo "$e-$fmt-$v 5 --artifact $out/artifacts/$e-$fmt-$v.qfa --batch $batches$gemms --check" >> "$out/runs.txt"
    done
  done
done
tar czf "$out/artifacts.tgz" -C "$out" artifacts && rm -rf "$out/artifacts"
echo "make-zoo-check: $(wc -l < "$out/runs.txt") runs, $(du -sh "$out/artifacts.tgz" | cut -f1) packed, in $out"
