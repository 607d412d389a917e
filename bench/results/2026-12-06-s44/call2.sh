#!/usr/bin/env bash
# Session 44's second device call (one machine start): the A/B of mma.sp's
# candidates (sparse-ab.sh), then session 43's prepared A/B of the
# activation copies (rows/ab.sh) and the 2:4 batch-1 crossover on the
# training shapes (next-sparse-b1.sh). Carry ["build-s74", "build-s68",
# "build-s67"]; each script's header says how its carry was made.
# Run as  bash bench/results/2026-12-06-s44/call2.sh   (about 520 s)
set -uo pipefail
BUDGET=190 bash bench/results/2026-12-06-s44/sparse-ab.sh
BUDGET=160 bash bench/results/2026-12-06-s43/rows/ab.sh
bash bench/results/2026-12-06-s43/next-sparse-b1.sh
nvidia-smi -L > "${OUT:-$PWD/gpu-out}/gpu.txt"
