#!/usr/bin/env bash
# Session 45: the test-set A/B of one tie order. Where the time model
# predicts block_k 128 in 3 stages and block_k 64 in 4 stages the same time
# (clusters, up to batch 32), main takes block_k 64 (the first listed); the
# training sweep of session 44 (wgmma-sweep, M = 16-32) measured block_k 128
# as fast or faster in 7 of 8 such pairs (8% and 17% on the two down
# projections at M = 32). OLD (`-a`): main; NEW (`-b`): main with the cluster
# candidates listed block_k 128 first (MmaCandidates.cpp). Carry
# ["build-s80"] (git-ignored), made by
#   python3 bench/cost-model/tiling_changes.py OLD NEW --json changes.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW changes.json build-s80/ab
#   cp build-s61/vendor.tgz build-s80/
# (42 zoo cells change, 12 runs x 2, about 80 s estimated). Summary:
# bench/wgmma-producer/ab-summary.py.
# Run as  BUDGET=100 bash bench/results/2026-12-06-s45/bk128-ab.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s80/vendor.tgz
ZOO_WORK=/tmp/s45bk bash bench/zoo/run-zoo.sh build-s80/ab "${BUDGET:-100}" | tail -3
mv "$out/zoo.tgz" "$out/bk128-ab.tgz"
