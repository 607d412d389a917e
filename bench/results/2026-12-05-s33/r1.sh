#!/usr/bin/env bash
# Session 33's one device call, if a machine starts (four starts failed
# before it): the two prepared rounds in one command of at most 560 s,
# most wanted first. Carry ["build-s31", "build-s32"], remade this session
# from main c3f3278 as the scripts' headers say (the old compiler of the
# A/B at 903038b: that commit's three TensorCore files built in place).
#   1. bench/results/2026-12-05-h200-s31/r4.sh: the sorted attention GPU
#      tests, the `attno` timings (ao / aop / aot / int4) of three models,
#      the aot checks at 32 and 128, then the 2:4 batch-1 matvec sweep as
#      far as its share allows;
#   2. bench/results/2026-12-05-s32/r5.sh with the int4-g128 A/B of the
#      quad sums only, then the ncu stall reasons (reusing r4's runtime
#      build).
# Run as  bash bench/results/2026-12-05-s33/r1.sh
set -uo pipefail
t0=$(date +%s)
BUDGET=${R4_BUDGET:-290} bash bench/results/2026-12-05-h200-s31/r4.sh 2>&1 | tail -45
left=$(( ${TOTAL:-545} - ($(date +%s) - t0) ))
echo "== r5 with $left s"
BUDGET=$left AB_SETS=build-ab-int4 bash bench/results/2026-12-05-s32/r5.sh 2>&1 | tail -40
