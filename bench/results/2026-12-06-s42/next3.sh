#!/usr/bin/env bash
# Prepared in session 42: issue 20's 2:4 round with the compiler of
# a5b2f39 (session 41's wave rule makes dense int4 faster at M = 1-2 on
# 3584-row weights; session 42 changed the cluster exchange, which 24 of
# these 2:4 launches use and no GPU has run since). Carry ["build-s63"]
# (git-ignored), made by
#   NO_MMA=1 SHAPES="5120x13824 3584x18944" BATCHES=1,2,4,8,16,32,64 \
#     FORMATS="sp-f16 sp-int4 int4" bash bench/sparse24/make-artifacts.sh build build-s63/sp
#   cp build-s56/vendor.tgz build-s63/
# Every plan checked; 2:4 + int4 against dense int4-g128 and 2:4 f16
# against cuBLAS fp16 in one process (summary.txt). Session 40's round of
# the same runs (bench/results/2026-12-06-s40, sparse24/) is the before.
# Run as  bash bench/results/2026-12-06-s42/next3.sh   (about 200 s)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s63/vendor.tgz
SPARSE24_WORK=/tmp/s43sp timeout 540 bash bench/sparse24/run.sh build-s63/sp | tail -30
[ -f "$out/sparse24.tgz" ] || tar czf "$out/sparse24.tgz" -C /tmp/s43sp sparse24
