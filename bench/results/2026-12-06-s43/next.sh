#!/usr/bin/env bash
# Prepared in session 43: the next session's first device call, the two
# prepared measurements in one call (one machine start): rows/ab.sh (the
# A/B of 06a77390 on 140 zoo cells) and next-sparse-b1.sh (2:4 at batch 1
# on the matvec against mma.sp, training shapes). Carry
# ["build-s67", "build-s68"] (both git-ignored; each script's header says
# how they were made). About 300 s. Then the zoo round of record with
# main's compiler: `BUDGET=550 bash bench/results/2026-12-06-s43/zoo.sh`,
# carry ["build-s69"].
# Run as  BUDGET=200 bash bench/results/2026-12-06-s43/next.sh
set -uo pipefail
here=bench/results/2026-12-06-s43
bash $here/rows/ab.sh
bash $here/next-sparse-b1.sh
