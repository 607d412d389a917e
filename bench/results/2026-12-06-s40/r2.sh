#!/usr/bin/env bash
# Session 40, device call 3. Carry ["build-s48"] (git-ignored), made by
#   (qfuse-compile of 77b44f5 as OLD; NEW with the crossover one batch
#    earlier where the matvec runs 2 rows a warp with K unsplit: integer
#    codes from M = 2, 4-bit tables from M = 3)
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s48/changes-regime.json build-s48/regime --chip sm_90a
# changes-regime.json: zoo entries (test set; 4 singles, 3 q/k/v groups)
# in that regime, none of them in the zoo round's sample, int4-g128 and
# int8 at M = 2, NF4 and NVFP4 at M = 3 and 4, a and b each checked and
# timed against cuBLAS fp16 in one process.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s40/r2.sh  (about 330 s)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s48/vendor.tgz
ZOO_WORK=/tmp/s40rg bash bench/zoo/run-zoo.sh build-s48/regime "${BUDGET:-330}" | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s40rg > /tmp/s40rg/zoo/ab-summary.md 2>&1
cat /tmp/s40rg/zoo/ab-summary.md
mv "$out/zoo.tgz" "$out/regime.tgz"
