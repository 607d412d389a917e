#!/usr/bin/env bash
# Session 44: which block_m for 2:4 on mma.sp at M = 32 and 64 (issue 20's
# 2:4 f16 misses 1.5x cuBLAS only at M = 64, where the time model picks
# block_m 64). mma.sp at every block_m from 16 to the batch, block_n
# 32-128, split_k 1-4, clusters of 1-2, for 2:4 + int4-g128 and 2:4 f16,
# on training shapes only (Llama-3-8B's q, down, up; Qwen2.5-7B's down),
# placeholder weights (a tiling sweep; the checked rounds cover the
# kernels), against cuBLAS fp16 in the same process. Carry ["build-s73"]
# (git-ignored), made by
#   for enc in "int4, group = 128, scale = f16, sparse = 2:4" "f16, sparse = 2:4"; do
#     SHAPES="l8b-q 4096 4096
#   l8b-down 4096 14336
#   l8b-up 14336 4096
#   q7b-down 3584 18944" BATCHES=32,64 MODE=blockm ENC="$enc" JOBS=2 \
#       python3 bench/pipeline-depth/make-sweep.py build build-s73/sp-<int4|f16>
#     (cd build-s73/sp-<...> && tar cJf artifacts.txz artifacts && rm -rf artifacts)
#   done; cp build-s61/vendor.tgz build-s73/
# 880 artifacts in 16 runs, about 225 s estimated.
# Run as  BUDGET=260 bash bench/results/2026-12-06-s44/sparse-blockm.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s73/vendor.tgz
half=$(( ${BUDGET:-260} / 2 ))
for e in int4 f16; do
  ZOO_WORK=/tmp/s44bm-$e bash bench/zoo/run-zoo.sh build-s73/sp-$e "$half" | tail -3
  mv "$out/zoo.tgz" "$out/sparse-blockm-$e.tgz"
done
