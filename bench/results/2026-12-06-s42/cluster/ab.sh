#!/usr/bin/env bash
# Session 42: the A/B of cluster sums pushed to rank 0 (TensorCoreReduce.cpp reduceCluster)
# on zoo cells (the test set), int4-g128 and int8 at batches 16-128 on 8
# zoo entries drawn at random (changes.json, seed 7), made by
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW \
#     bench/results/2026-12-06-s42/cluster/changes.json build-s59/ab --chip sm_90a
# OLD: qfuse-compile of 3595817 (main), NEW: with pinned constants (no effect
# on int4; one loop instruction less on int8) and the pushed cluster sums.
# Carry ["build-s59"]. Every plan checked, timed against cuBLAS fp16 in the
# same process; summarize with bench/wgmma-producer/ab-summary.py.
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s59/vendor.tgz
ZOO_WORK=/tmp/s42cl bash bench/zoo/run-zoo.sh build-s59/ab "${BUDGET:-420}" | tail -6
mv "$out/zoo.tgz" "$out/ab.tgz"
