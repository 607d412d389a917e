#!/usr/bin/env bash
# Prepared in session 45 (which got no device machine): the next session's
# first device call, about 560 s on one machine start, in order of value:
#  1. vs-dense.sh (carry build-s79; its budget holds the qfuse-bench
#     build): issue 20's 2:4 targets in one process on the zoo, batches
#     1-64 (2:4 + int4 against dense int4-g128, 2:4 f16 against cuBLAS
#     fp16), main's compiler, every plan checked;
#  2. bk128-ab.sh (carry build-s80): the test-set A/B of listing block_k 128
#     before 64 among the cluster candidates up to batch 32 (bk128.patch);
#     land the patch if b / a <= 1.0 with no cell much slower;
#  3. mgrid.sh (carry build-s78): dense mma.sync at block_m 16-64 against
#     every K split at M = 32, 64, 96 on training shapes (issue 18's
#     b32-b128 gap; the budget cuts the last shapes).
# Second call: `BUDGET=360 bash bench/results/2026-12-06-s45/pstep-ab.sh`
# (carry build-s81: the zoo A/B of pstep.patch). Then session 44's next.sh
# (carry build-s76, build-s67, build-s77) and
# `BUDGET=550 bash bench/results/2026-12-06-s43/zoo.sh` (carry build-s69).
# Each script's header says how its carry was made.
# Run as  bash bench/results/2026-12-06-s45/next.sh
#   carry ["build-s79", "build-s80", "build-s78"], timeout_s 595
set -uo pipefail
BUDGET=220 bash bench/results/2026-12-06-s45/vs-dense.sh
BUDGET=90 bash bench/results/2026-12-06-s45/bk128-ab.sh
BUDGET=250 bash bench/results/2026-12-06-s45/mgrid.sh
