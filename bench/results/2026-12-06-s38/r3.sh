#!/usr/bin/env bash
# Session 38: training sweeps for the time model, in one call.
#   sweeps/: NF4 at batches 16 and 32 and NVFP4 at 64 (Llama-3-8B, the
#     training shapes; 976 mma.sync candidates, placeholder weights, one
#     process per batch beside cuBLAS fp16) compiled by the decodes of
#     session 37, to refit the table decode cost. Carry build-s42, made by
#       for s in "nf4 16" "nf4 32" "nvfp4 64"; do set -- $s
#         python3 bench/tune.py prepare --build build --models llama3-8b \
#           --encodings $1 --batch $2; done
#     (run from an empty folder; artifacts/runs3.txt is those three lines).
#   sp/: session 36's r4 (the mma.sp sweep), carry build-s39.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s38/r3.sh
set -uo pipefail
. bench/round-lib.sh
round_start /tmp/s38r3 r3.tgz "${BUDGET:-480}"
tar xzf build-s42/vendor.tgz
xz -dc build-s42/sweep.txz | tar xf - -C build-s42
tar xJf build-s39/sp-tune.txz -C build-s39
export QFUSE_GIT_COMMIT="$(cat build-s42/COMMIT)+s38r3"
round_bench=$PWD/build-gpu/bin/qfuse-bench # r2.sh built it on this machine
[ -x "$round_bench" ] || round_build_bench || exit 1
round_sub=sweeps
while read -r name args; do round_run build-s42 $name $args; done \
  < build-s42/artifacts/runs3.txt
round_sub=sp
while read -r name args; do round_run build-s39 $name $args; done \
  < build-s39/artifacts/runs.txt
round_checks_not_ok
