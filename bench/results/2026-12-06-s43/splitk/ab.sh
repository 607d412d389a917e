#!/usr/bin/env bash
# Session 43: the A/B of split-K sums spread over the k groups
# (TensorCoreReduce.cpp reduceSplitK) on zoo cells (the test set):
# int4-g128, NF4 and int8 at batches 4-128 on 7 zoo entries of 2M-24M
# weights drawn at random (changes.json, seed 43; int4-g128 skipped where
# 128 does not divide K), made by
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW \
#     bench/results/2026-12-06-s43/splitk/changes.json build-s64/ab --chip sm_90a
#   cp build-s61/vendor.tgz build-s64/
# OLD: qfuse-compile of a5b2f39 (main's kernels), NEW: with the spread
# sums. Carry ["build-s64"]. Every plan checked, timed against cuBLAS fp16
# in the same process; summarize with bench/wgmma-producer/ab-summary.py.
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s64/vendor.tgz
ZOO_WORK=/tmp/s43sk bash bench/zoo/run-zoo.sh build-s64/ab "${BUDGET:-300}" | tail -6
mv "$out/zoo.tgz" "$out/ab.tgz"
