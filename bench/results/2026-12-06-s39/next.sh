#!/usr/bin/env bash
# Session 39's two prepared rounds in one device call (a start costs more
# than either round): r3.sh (table formats on the tensor-core kernel from
# batch 3), then r2.sh (the H200 batch-1 sweep and the matvec rule's zoo
# A/B). Carry ["build-s46", "build-s47"].
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s39/next.sh  (about 520 s)
set -uo pipefail
budget=${BUDGET:-520}
start=$(date +%s)
BUDGET=$(( budget * 2 / 5 )) bash bench/results/2026-12-06-s39/r3.sh
BUDGET=$(( budget - ($(date +%s) - start) - 5 )) bash bench/results/2026-12-06-s39/r2.sh
