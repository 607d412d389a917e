#!/usr/bin/env bash
# Session 44's device call after call2.sh got no machine: the A/B of
# mma.sp's candidates first (sparse-ab.sh), then session 43's prepared A/B
# of the activation copies (rows/ab.sh). Carry ["build-s74", "build-s68"].
# Run as  bash bench/results/2026-12-06-s44/call3.sh   (about 380 s)
set -uo pipefail
BUDGET=190 bash bench/results/2026-12-06-s44/sparse-ab.sh
BUDGET=160 bash bench/results/2026-12-06-s43/rows/ab.sh
nvidia-smi -L > "${OUT:-$PWD/gpu-out}/gpu.txt"
