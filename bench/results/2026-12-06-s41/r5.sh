#!/usr/bin/env bash
# Session 41, device call 5: the test of the matvec wave rule
# (MatvecSelection.cpp: at M <= 2, 4-bit codes at 2 rows a warp whose grid
# runs in a second, partial wave take 4 rows a warp with the same split).
# Carry ["build-s55"] (git-ignored), made by
#   (OLD: qfuse-compile of f8f1cb4; NEW: the working tree with the rule)
#   python3 bench/results/2026-12-06-s41/zoo_changes.py OLD NEW build-s55/changes.json --what tilings --batches 1,2  (= wave-zoo/changes-measured.json)
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s55/changes.json build-s55/ab --chip sm_90a
# The 119 zoo cells (test set; q/k/v groups included) the rule moves, pairs
# in make-zoo-ab.py's fixed random order so that a cut leaves a sample; a and
# b each checked and timed against cuBLAS fp16 in one process.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s41/r5.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s55/vendor.tgz
ZOO_WORK=/tmp/s41w bash bench/zoo/run-zoo.sh build-s55/ab "${BUDGET:-200}" | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s41w 2>&1 | tail -12
mv "$out/zoo.tgz" "$out/wave-zoo.tgz"
