#!/usr/bin/env bash
# Prepared in session 46: the test-set A/B of split_k 4 past batch 32.
# Session 46's mgrid sweep (mgrid/, training shapes, H200) found the
# fastest tiling at M = 64 splitting K four ways on four of five shapes,
# which the mma.sync list past batch 32 does not hold ((128,1) (64,1)
# (64,2) (32,2) (32,4)); with (64,4) added the time model's picks over the
# swept tilings take 0.952 of the measured defaults' time at M = 64 and 96
# (0.88 on both down projections at 64, 1.01 at worst). OLD (`-a`): main
# (build-s51/qfuse-compile-s46); NEW (`-b`): main with {64, 4} after
# {64, 2} in mmaCandidates' list past 32 (MmaCandidates.cpp;
# build-s51/qfuse-compile-s4). Carry ["build-s82"] (git-ignored), made by
#   python3 bench/cost-model/tiling_changes.py OLD NEW --chip sm_90a --json build-s82/changes.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s82/changes.json build-s82/ab
#   cp build-s61/vendor.tgz build-s82/
# (61 zoo cells change at batches 48-96: int4-g128, int4 per channel,
# uint4-g128, int8, fp8, NF4, MXFP4; 35 runs x 2, about 250 s estimated).
# Land the rule if b / a <= 1.0 with no cell much slower. Summary:
# bench/wgmma-producer/ab-summary.py.
# Run as  BUDGET=280 bash bench/results/2026-12-06-s46/s4-ab.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s82/vendor.tgz
ZOO_WORK=/tmp/s46s4 bash bench/zoo/run-zoo.sh build-s82/ab "${BUDGET:-280}" | tail -3
mv "$out/zoo.tgz" "$out/s4-ab.tgz"
nvidia-smi -L > "$out/gpu.txt"
