#!/usr/bin/env bash
# Session 47, device call 1 (fresh CPU machine: carries rebuilt from the
# scripts' headers, the same 101 changed cells as session 46's
# s4m-changes.json): session 46's test-set A/B of split_k 4 and block_m 32
# past batch 32 (s4m-ab.sh, carry build-s83), then session 43's 2:4 at
# batch 1 on mma.sp against the matvec (next-sparse-b1.sh, carry build-s67).
# Run as  bash bench/results/2026-12-06-s47/call1.sh
#   carry ["build-s83", "build-s67"], timeout_s 595
set -uo pipefail
BUDGET=330 bash bench/results/2026-12-06-s46/s4m-ab.sh
bash bench/results/2026-12-06-s43/next-sparse-b1.sh
