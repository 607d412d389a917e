#!/usr/bin/env bash
# Prepared in session 44: the next session's first device call (one
# machine start, about 400 s): the test-set A/B of mma.sp without clusters
# for block_n 128 at batches 2-16 (sparse-ab16.sh, carry build-s76),
# session 43's 2:4 batch-1 crossover on the training shapes
# (next-sparse-b1.sh, carry build-s67), and mma.sp's pipeline depth at
# M = 2-16 (sparse-depth.sh, carry build-s77). Each script's header says how its
# carry was made. Then the zoo round of record:
# `BUDGET=550 bash bench/results/2026-12-06-s43/zoo.sh`, carry ["build-s69"]
# (main's dense selection has not changed since it was compiled).
# Run as  bash bench/results/2026-12-06-s44/next.sh
#   carry ["build-s76", "build-s67", "build-s77"]
set -uo pipefail
BUDGET=120 bash bench/results/2026-12-06-s44/sparse-ab16.sh
bash bench/results/2026-12-06-s43/next-sparse-b1.sh
BUDGET=160 bash bench/results/2026-12-06-s44/sparse-depth.sh
nvidia-smi -L > "${OUT:-$PWD/gpu-out}/gpu.txt"
