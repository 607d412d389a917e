#!/usr/bin/env bash
# Session 40, device call 4. Carry ["build-s48"] (git-ignored), made by
#   python3 bench/results/2026-12-06-s40/make-regime-ab.py split build-s48/split
#   python3 bench/results/2026-12-06-s40/make-regime-ab.py wide build-s48/wide
# (compiler of 1941382). Every plan checked and timed against cuBLAS fp16
# in one process; ab-summary.md per regime.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s40/r3.sh  (about 420 s)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
budget=${BUDGET:-420}
start=$(date +%s)
tar xzf build-s48/vendor.tgz
for r in split wide; do
  left=$(( budget - ($(date +%s) - start) - 10 ))
  [ $r = split ] && left=$(( left * 11 / 20 ))
  bench=(); [ -x build-gpu/bin/qfuse-bench ] && bench=(env QFUSE_BENCH=$PWD/build-gpu/bin/qfuse-bench)
  "${bench[@]}" env ZOO_WORK=/tmp/s40$r bash bench/zoo/run-zoo.sh build-s48/$r $left | tail -2
  python3 bench/wgmma-producer/ab-summary.py /tmp/s40$r > /tmp/s40$r/zoo/ab-summary.md 2>&1
  cat /tmp/s40$r/zoo/ab-summary.md
  mv "$out/zoo.tgz" "$out/$r.tgz"
done
