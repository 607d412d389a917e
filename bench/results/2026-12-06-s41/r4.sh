#!/usr/bin/env bash
# Session 41, device call 4 (training data, not a test): the matvec at
# M = 1-2 on Qwen2.5-7B's 3584-row q/o and down (a training model), where
# the default tiling (2 rows a warp, K split in 2: 896 blocks) overflows one
# wave of resident blocks (5-6 an SM), against 2 rows unsplit and 4 rows
# split in 2 (448 blocks each), forced through a tuning database. Carry
# ["build-s54"], made by
#   python3 bench/results/2026-12-06-s41/make-wave-tilings.py
# (int4-g128, NF4, int8; the three artifacts of a shape and format in one
# qfuse-bench process, each plan checked, beside cuBLAS fp16).
# Run as  bash bench/results/2026-12-06-s41/r4.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s54/vendor.tgz
ZOO_WORK=/tmp/s41wave bash bench/zoo/run-zoo.sh build-s54 200 | tail -8
mv "$out/zoo.tgz" "$out/wave.tgz"
