#!/usr/bin/env bash
# Session 42: the A/B of .minnctapersm 1 on tensor-core grids of at most a block an SM
# on the zoo cells whose registers it changes (registers.json: 140 of 312
# cells of 12 entries drawn at random, seed 11, batches 3-128), made by
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW \
#     bench/results/2026-12-06-s42/minncta/changes.json build-s60/ab --chip sm_90a
# OLD: pinned constants and pushed cluster sums (build-s51/qfuse-compile-pc),
# NEW: the same with .minnctapersm 1 where the grid fits a block an SM.
# Carry ["build-s60"]. Every plan checked, timed against cuBLAS fp16 in the
# same process; summarize with bench/wgmma-producer/ab-summary.py.
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s60/vendor.tgz
ZOO_WORK=/tmp/s42mn bash bench/zoo/run-zoo.sh build-s60/ab "${BUDGET:-420}" | tail -6
mv "$out/zoo.tgz" "$out/ab.tgz"
