#!/usr/bin/env bash
# Prepared in session 36 for a later device call (not run): the mma.sp
# (2:4 + int4-g128) tuning sweep of the TRAINING shapes, so that the time
# model can be fitted on mma.sp (it ranks mma.sp untrained today: r2 saw
# 2:4 + int4 at 4096x14336, batches 2-16, pick 16 K slices and run 1.4x
# slower than 2:4 + uint4's listed 8-slice tiling). Carry ["build-s39"]:
# sp-tune.txz, the folder `artifacts` that
#   for b in 16 4 32 64; do python3 bench/tune.py prepare --build build \
#     --batch $b --models llama3-8b --encodings 2:4+int4 --mma \
#     --only q_proj k_proj gate_proj down_proj; done
# wrote (676 candidates, placeholder weights, timed beside cuBLAS fp16 in
# one process per batch), and vendor.tgz. Back here the JSON goes under
# bench/results (tune-llama3-8b-2_4_int4-b<M>.json), where fit.py reads it
# (FORMATS["2_4_int4"]).
# Run as  BUDGET=<s> bash bench/results/2026-12-05-s36/r4.sh
set -uo pipefail
. bench/round-lib.sh
round_start /tmp/s36r4 r4.tgz "${BUDGET:-480}"
tar xzf build-s39/vendor.tgz
tar xJf build-s39/sp-tune.txz -C build-s39
export QFUSE_GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)+s36r4"
round_build_bench || exit 1
while read -r name args; do round_run build-s39 $name $args; done \
  < build-s39/artifacts/runs.txt
round_archive
