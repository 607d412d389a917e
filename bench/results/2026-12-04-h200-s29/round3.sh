#!/usr/bin/env bash
# Prepared in session 29: the 2:4 matvec's selectors made four at a time
# (docs/defaults.md, "2:4: mma.sp from batch 2"). Every 2:4 format and
# dense int4-g128 at batches 1 and 2 (the matvec), the default shapes of
# bench/sparse24, each plan checked and timed against cuBLAS fp16 in one
# process; then the same artifacts compiled by main (the selector made per
# quad, build-sp29-old), for the A/B in one call.
# Made with (build = branch oproj's compiler, /work/main/build = main's)
#   BATCHES=1,2 NO_MMA=1 bench/sparse24/make-artifacts.sh build build-sp29
#   BATCHES=1,2 NO_MMA=1 bench/sparse24/make-artifacts.sh /work/main/build build-sp29-old
#   mkdir -p build-s29 && tar cJf build-s29/sp.txz build-sp29 build-sp29-old
# run with carry ["build-s29"] as
#   tar xJf build-s29/sp.txz && bash bench/results/2026-12-04-h200-s29/round3.sh
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
bash build-sp29/run.sh build-sp29 2>&1 | tail -40
mv "$OUT/sparse24.tgz" "$OUT/sparse24-new.tgz"
QFUSE_BENCH=$PWD/build-gpu/bin/qfuse-bench bash build-sp29-old/run.sh build-sp29-old 2>&1 | tail -40
mv "$OUT/sparse24.tgz" "$OUT/sparse24-old.tgz"
