#!/usr/bin/env bash
# Prepared in session 46: the test-set A/B of two mma.sync rules past
# batch 32 together (s4m.patch): split_k 4 in the list past 32 ({64, 4}
# after {64, 2}, as s4.patch) and dense block_m 32 beside the batch
# rounded up at 33-64 rows (mmaBlockMs; mma.sp has it already). Session
# 46's mgrid sweep (training shapes, H200): over the swept tilings the time
# model given both picks tilings that took 0.923 of the measured defaults'
# time at M = 64 and 96 (Llama-3-8B's kv at 64: block_m 32, 5.23 against
# 7.65 us; both downs at 64: split_k 4, 0.88-0.89; 1.01 at worst); the
# large shapes keep block_m 64 there. OLD (`-a`): main
# (build-s51/qfuse-compile-s46); NEW (`-b`): main with s4m.patch
# (build-s51/qfuse-compile-s4m). Carry ["build-s83"] (git-ignored), made by
#   python3 bench/cost-model/tiling_changes.py OLD NEW --chip sm_90a --json build-s83/changes.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s83/changes.json build-s83/ab
#   cp build-s61/vendor.tgz build-s83/
# (101 zoo cells change at batches 48-128, 53 of them to block_m 32, all
# on weights of 2048 rows or fewer; 52 runs x 2, about 320 s estimated).
# Split the summary by change (block_m 32 or split_k 4; s4m-changes.json)
# and land what holds b / a <= 1.0 with no cell much slower. Summary:
# bench/wgmma-producer/ab-summary.py.
# Run as  BUDGET=340 bash bench/results/2026-12-06-s46/s4m-ab.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s83/vendor.tgz
ZOO_WORK=/tmp/s46s4m bash bench/zoo/run-zoo.sh build-s83/ab "${BUDGET:-340}" | tail -3
mv "$out/zoo.tgz" "$out/s4m-ab.tgz"
nvidia-smi -L > "$out/gpu.txt"
