#!/usr/bin/env bash
# Session 44: mma.sp's tilings at M = 2, 8 and 16 (where 2:4 + int4 runs
# at about 1.6 TB/s against dense int4's 2.2, session 43's sparse24/):
# every block_n 32-128, split_k 1-8, block_k 64 (4 stages) and 128 (3),
# cluster 1-4 (make-sweep.py MODE=wide, less its wgmma tilings: 2:4 has
# none), 2:4 + int4-g128 and 2:4 f16 on training
# shapes only, placeholder weights, against cuBLAS fp16 in the same
# process. Carry ["build-s75"] (git-ignored), made by
#   for enc in "int4, group = 128, scale = f16, sparse = 2:4" "f16, sparse = 2:4"; do
#     SHAPES="l8b-q 4096 4096
#   l8b-down 4096 14336
#   l8b-up 14336 4096
#   q7b-down 3584 18944" BATCHES=2,8,16 MODE=wide ENC="$enc" JOBS=2 \
#       python3 bench/pipeline-depth/make-sweep.py build build-s75/sp-<int4|f16>
#     (cd build-s75/sp-<...> && tar cJf artifacts.txz artifacts && rm -rf artifacts)
#     # runs.txt: estimates of 6 s (about 2 s a run measured), no wgmma:
#     awk '{$2=6; print}' runs.txt | sed -E 's/ --artifact [^ ]*-W[0-9]+N[^ ]*\.qfa//g'
#   done; cp build-s61/vendor.tgz build-s75/
# Run as  BUDGET=200 bash bench/results/2026-12-06-s44/sparse-wide.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s75/vendor.tgz
half=$(( ${BUDGET:-200} / 2 ))
for e in int4 f16; do
  ZOO_WORK=/tmp/s44wide-$e bash bench/zoo/run-zoo.sh build-s75/sp-$e "$half" | tail -3
  mv "$out/zoo.tgz" "$out/sparse-wide-$e.tgz"
done
