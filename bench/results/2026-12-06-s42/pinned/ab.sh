#!/usr/bin/env bash
# Session 42: the A/B of pinned prmt constants (KernelEmitter::pinnedConstant)
# on zoo cells (the test set), NF4, NVFP4 and MXFP4 at batches 1-128 on 8
# zoo entries drawn at random (changes.json, seed 42), made by
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW \
#     bench/results/2026-12-06-s42/pinned/changes.json build-s58/ab --chip sm_90a
# OLD: qfuse-compile of 3595817 (main), NEW: the same with pinned constants.
# Carry ["build-s58"]. Every plan checked, timed against cuBLAS fp16 in the
# same process; summarize with bench/wgmma-producer/ab-summary.py.
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s58/vendor.tgz
ZOO_WORK=/tmp/s42ab bash bench/zoo/run-zoo.sh build-s58/ab "${BUDGET:-420}" | tail -6
mv "$out/zoo.tgz" "$out/ab.tgz"
