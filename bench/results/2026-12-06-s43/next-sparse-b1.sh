#!/usr/bin/env bash
# Prepared in session 43 for the next device call: where 2:4 should leave
# the matvec (issue 20's 2:4 + int4 >= 1.25x of dense int4 at batch 1).
# Session 43's 2:4 round (sparse24/) ran 2:4 + int4 on mma.sp at batch 2 in
# less time than its batch-1 matvec on both zoo shapes (3584 x 18944: 13.8
# against 15.5 us; 5120 x 13824: 14.4 against 15.3), so the batch-1 rule
# (CostModel.cpp, sparseMatvec) wants measuring again on the training
# shapes (Llama-3-8B's), not the zoo: each 2:4 format's default (matvec at
# batch 1) and its -mma variant (mma.sp at 1-4 through a tuning database)
# beside dense int4-g128 and cuBLAS fp16 in one process, every plan checked.
# Carry ["build-s67"] (git-ignored), made by
#   SHAPES="4096x4096 4096x14336 14336x4096 1024x4096" BATCHES=1,2,4 \
#     FORMATS="sp-f16 sp-int4 sp-int8 int4" bash bench/sparse24/make-artifacts.sh build build-s67/sp
#   cp build-s61/vendor.tgz build-s67/
# Run as  bash bench/results/2026-12-06-s43/next-sparse-b1.sh   (about 120 s)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s67/vendor.tgz
SPARSE24_WORK=/tmp/s44sp timeout 540 bash bench/sparse24/run.sh build-s67/sp | tail -30
[ -f "$out/sparse24.tgz" ] || tar czf "$out/sparse24.tgz" -C /tmp/s44sp sparse24
