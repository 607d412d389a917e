#!/usr/bin/env bash
# Session 25, GPU call 2 (build-s25b carried: vendor.tgz, xzoo/ made by
#   ENTRIES="s1024x8192 s3072x3072 s3584x4096 s4096x3584 s2048x3584" \
#   FORMATS="int4-g128 uint4-g32-asym nf4 nvfp4 int8 fp8" \
#   OLD_FLAGS="--tensor-core-small-min-weights=16777216" \
#   bench/crossover/make-zoo-check.sh build build-s25b/xzoo
# at 8cb0bd9+): the new crossover size bound (8 x 2^20) against the old
# (4096 x 4096) on the zoo's weights between them (test shapes) and one
# below both (s2048x3584, where the two artifacts are the same: noise),
# batches 1-8, every plan checked, against cuBLAS fp16 in the same process.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"
tar xzf build-s25b/vendor.tgz
bash bench/zoo/run-zoo.sh build-s25b/xzoo 420
