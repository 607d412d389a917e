#!/usr/bin/env bash
# Session 45: dense int4-g128 mma.sync past batch 16 (issue 18's b32-b128
# gap): block_m 16-64 against every way of splitting K (split_k 1-4,
# clusters of 1-4, block_n 32-128), on training shapes only (Llama-3-8B q,
# kv, down, up; Qwen2.5-7B down) at M = 32, 64, 96, placeholder weights (a
# tiling sweep), against cuBLAS fp16 in the same process. The s42 profile
# saw one warp a scheduler waiting on its HMMAs at M = 64: this asks whether
# more, smaller blocks or more K slices pay. Carry ["build-s78"]
# (git-ignored), made by
#   SHAPES="l8b-q 4096 4096
#   l8b-kv 1024 4096
#   l8b-down 4096 14336
#   l8b-up 14336 4096
#   q7b-down 3584 18944" BATCHES=32,64,96 MODE=mgrid JOBS=2 \
#     python3 bench/pipeline-depth/make-sweep.py build build-s78/mg
#   (cd build-s78/mg && tar cJf artifacts.txz artifacts && rm -rf artifacts)
#   cp build-s61/vendor.tgz build-s78/
# 1095 artifacts in 15 runs, about 260 s estimated.
# Run as  BUDGET=300 bash bench/results/2026-12-06-s45/mgrid.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s78/vendor.tgz
ZOO_WORK=/tmp/s45mg bash bench/zoo/run-zoo.sh build-s78/mg "${BUDGET:-300}" | tail -3
mv "$out/zoo.tgz" "$out/mgrid.tgz"
nvidia-smi -L > "$out/gpu.txt"
