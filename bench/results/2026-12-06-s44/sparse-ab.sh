#!/usr/bin/env bash
# Session 44: the A/B of mma.sp's own candidates past 16 rows
# (MmaCandidates.cpp sparseMmaCandidates, block_m 32 at 33-64 rows) on
# the test set: 2:4 + int4-g128 and 2:4 f16 at batches 24-64 on 8 zoo
# entries of 8M-40M weights (seed 44), the cells whose artifacts differ,
# every plan checked, timed against cuBLAS fp16 in the same process.
# OLD: qfuse-compile of 42257f7c (build-s51/qfuse-compile-rows), NEW: with
# the change. Carry ["build-s74"] (git-ignored), made by
#   python3 bench/sparse24/make-ab.py build-s51/qfuse-compile-rows \
#     build/bin/qfuse-compile build-s74/ab
#   cp build-s61/vendor.tgz build-s74/
# Summarize with bench/sparse24/ab-summary.py.
# Run as  BUDGET=200 bash bench/results/2026-12-06-s44/sparse-ab.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s74/vendor.tgz
ZOO_WORK=/tmp/s44spab bash bench/zoo/run-zoo.sh build-s74/ab "${BUDGET:-200}" | tail -4
mv "$out/zoo.tgz" "$out/sparse-ab.tgz"
