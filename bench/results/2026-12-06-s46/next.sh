#!/usr/bin/env bash
# Prepared in session 46: the next session's first device call (one
# machine start, about 500 s): the test-set A/B of split_k 4 and block_m 32
# past batch 32 (s4m-ab.sh, carry build-s83; s4-ab.sh, carry build-s82,
# is split_k 4 alone), then block_k 64 against 128 for the group-32
# formats on the training shapes (bk128-g32.sh, carry build-s84). Each
# script's header says how its carry was made. Then, one call each:
# `BUDGET=550 bash bench/results/2026-12-06-s43/zoo.sh`, carry
# ["build-s69"] (the zoo round of record), and
# `bash bench/results/2026-12-06-s43/next-sparse-b1.sh`, carry
# ["build-s67"] (2:4 at batch 1 on mma.sp against the matvec; about 120 s;
# rebuilt in session 46).
# Run as  bash bench/results/2026-12-06-s46/next.sh
#   carry ["build-s83", "build-s84"], timeout_s 595
set -uo pipefail
BUDGET=340 bash bench/results/2026-12-06-s46/s4m-ab.sh
bash bench/results/2026-12-06-s46/bk128-g32.sh
