#!/usr/bin/env bash
# Prepared in session 43 for the next device call: the A/B of activation
# copies from the first passes' addresses plus constants where a pass is
# fewer than 8 rows (TensorCorePipeline.cpp issueActivations) on zoo cells
# (the test set): int4-g128, NF4, NVFP4 and int8 at batches 4-64 on 7 zoo
# entries of 2M-24M weights drawn at random (changes.json, seed 44; skipped
# where a group does not divide K), made by
#   python3 bench/cost-model/make-zoo-ab.py build-s51/qfuse-compile-splitk \
#     build-s51/qfuse-compile-rows bench/results/2026-12-06-s43/rows/changes.json \
#     build-s68/ab --chip sm_90a
#   cp build-s61/vendor.tgz build-s68/
# OLD: qfuse-compile of 65e30cf (the split-K sums), NEW: with this change.
# Carry ["build-s68"]. Every plan checked, timed against cuBLAS fp16 in
# the same process; summarize with bench/wgmma-producer/ab-summary.py and
# bench/results/2026-12-06-s43/splitk/by-change.py (the control: cells
# whose kernels are unchanged).
# Run as  BUDGET=300 bash bench/results/2026-12-06-s43/rows/ab.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s68/vendor.tgz
ZOO_WORK=/tmp/s44rows bash bench/zoo/run-zoo.sh build-s68/ab "${BUDGET:-300}" | tail -6
mv "$out/zoo.tgz" "$out/ab.tgz"
