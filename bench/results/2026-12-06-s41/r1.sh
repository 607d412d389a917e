#!/usr/bin/env bash
# Session 41, device call 1. Carry ["build-s51"] (git-ignored), made by
#   (build-s51/qfuse-compile-old: qfuse-compile of 616d45f; NEW: the
#    matvec's one-wave occupancy rule, MatVecKernel.cpp minBlocksPerSM)
#   python3 bench/results/2026-12-06-s41/zoo_changes.py OLD NEW build-s51/changes128.json --what minncta  (= occupancy/changes.json)
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s51/changes128.json build-s51/ab --chip sm_90a
# The 75 zoo cells (test set) whose matvec the rule changes: 4-bit tables,
# small weights at M = 5-7 and 8192-row weights at M = 4; a and b each
# checked and timed against cuBLAS fp16 in one process.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s41/r1.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s51/vendor.tgz
ZOO_WORK=/tmp/s41ab bash bench/zoo/run-zoo.sh build-s51/ab "${BUDGET:-400}" | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s41ab > /tmp/s41ab/zoo/ab-summary.md 2>&1
cat /tmp/s41ab/zoo/ab-summary.md
mv "$out/zoo.tgz" "$out/occupancy.tgz"
