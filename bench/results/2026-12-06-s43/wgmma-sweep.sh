#!/usr/bin/env bash
# Prepared in session 43: which kernel at M = 16, 32 and 64 (issue 18's
# "wgmma below M = 128"), on training shapes only (Llama-3-8B's and
# Qwen2.5-7B's, bench/pipeline-depth/make-sweep.py's defaults): the time
# model's first two mma.sync candidates (each also at block_m 64) against
# every wgmma tiling (block_m the batch rounded to 16 below 64, split_k
# 1-4, stages 3-6, clusters of 1-2), int4-g128, placeholder weights (a
# tiling sweep of kernels the checked rounds cover), against cuBLAS fp16
# in the same process. selectWgmma (CostModel.cpp) starts wgmma at
# M = 128; session 26 swept this at 128 and 256 only. Carry ["build-s71"]
# (git-ignored), made by
#   MODE=kernel BATCHES=16,32,64 TOP=2 JOBS=2 python3 bench/pipeline-depth/make-sweep.py build build-s71/sweep
#   (cd build-s71/sweep && tar cJf artifacts.txz artifacts && rm -rf artifacts)
#   cp build-s61/vendor.tgz build-s71/
# 425 artifacts in 15 runs, about 135 s estimated.
# Run as  BUDGET=300 bash bench/results/2026-12-06-s43/wgmma-sweep.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s71/vendor.tgz
ZOO_WORK=/tmp/s44wg bash bench/zoo/run-zoo.sh build-s71/sweep "${BUDGET:-300}" | tail -4
mv "$out/zoo.tgz" "$out/wgmma-sweep.tgz"
