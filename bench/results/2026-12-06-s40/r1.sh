#!/usr/bin/env bash
# Session 40, device call 2. Carry ["build-s48"] (git-ignored), made on the
# compile machine by
#   (qfuse-compile of 77b44f5 as OLD; of this commit, the 4-bit table
#    crossover from M = 3 where a 4-row matvec does not fill the GPU, as NEW)
#   python3 bench/cost-model/tiling_changes.py OLD NEW --chip sm_90a --json build-s48/changes.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s48/changes.json build-s48/tcab --chip sm_90a
#   NO_MMA=1 SHAPES="5120x13824 3584x18944" BATCHES=1,2,4,8,16,32,64 \
#     FORMATS="sp-f16 sp-int4 int4" bash bench/sparse24/make-artifacts.sh build build-s48/sp
# tcab/: the 20 zoo cells (test set) the new crossover moves, a and b each
#        checked and timed against cuBLAS fp16 in one process.
# sp/:   issue 20's 2:4 round on two zoo shapes with today's compiler
#        (8-slice cap), every plan checked.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s40/r1.sh  (about 330 s)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
budget=${BUDGET:-330}
start=$(date +%s)
tar xzf build-s48/vendor.tgz
ZOO_WORK=/tmp/s40tc bash bench/zoo/run-zoo.sh build-s48/tcab $(( budget / 3 )) | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s40tc > /tmp/s40tc/zoo/ab-summary.md 2>&1
cat /tmp/s40tc/zoo/ab-summary.md
mv "$out/zoo.tgz" "$out/tcab.tgz"
left=$(( budget - ($(date +%s) - start) - 10 ))
QFUSE_BENCH=$PWD/build-gpu/bin/qfuse-bench SPARSE24_WORK=/tmp/s40sp \
  timeout $left bash bench/sparse24/run.sh build-s48/sp | tail -30
[ -f "$out/sparse24.tgz" ] || tar czf "$out/sparse24.tgz" -C /tmp/s40sp sparse24
