#!/usr/bin/env bash
# Prepared in session 44 for the next session: do deeper pipelines feed
# mma.sp at M = 2, 8 and 16? 2:4 + int4 streams about 1.6 TB/s there
# against dense int4-g128's 2.2 on the same tiling (session 43's sparse24/,
# this session's sparse-wide-*): at one block of 8 warps an SM and 3
# stages it keeps about 0.6 of dense int4's weight bytes in flight. The
# time model's first three candidates at stages 3, 4, 6 and 8 and block_k
# 128 (make-sweep.py MODE=depth), 2:4 + int4-g128 and 2:4 f16, training
# shapes only, placeholder weights, against cuBLAS fp16 in the same
# process. Carry ["build-s77"] (git-ignored), made by
#   for enc in "int4, group = 128, scale = f16, sparse = 2:4" "f16, sparse = 2:4"; do
#     SHAPES="l8b-q 4096 4096
#   l8b-down 4096 14336
#   l8b-up 14336 4096
#   q7b-down 3584 18944" BATCHES=2,8,16 MODE=depth TOP=3 ENC="$enc" JOBS=2 \
#       python3 bench/pipeline-depth/make-sweep.py build build-s77/sp-<int4|f16>
#     # runs.txt: placeholder weights, estimates of 8 s:
#     sed -i -E 's/ --check / --placeholder-weights /; s/^([^ ]+) [0-9]+ /\1 8 /' runs.txt
#     # and without the 43 tilings past the shared memory (their artifacts
#     # are the dequantize + cuBLAS fallback: a "gemm" step in the plan)
#   done; cp build-s61/vendor.tgz build-s77/
# 197 artifacts in 24 runs, about 100 s.
# Run as  BUDGET=160 bash bench/results/2026-12-06-s44/sparse-depth.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s77/vendor.tgz
half=$(( ${BUDGET:-160} / 2 ))
for e in int4 f16; do
  ZOO_WORK=/tmp/s45depth-$e bash bench/zoo/run-zoo.sh build-s77/sp-$e "$half" | tail -3
  mv "$out/zoo.tgz" "$out/sparse-depth-$e.tgz"
done
