#!/usr/bin/env bash
# Prepared in session 46: does block_k 128 pay for group-32 formats on the
# TRAINING shapes? In session 46's two zoo A/Bs (bk128-ab/, pstep-ab/)
# block_k 128 was faster for MXFP4 (0.81-0.94) and uint4 g32 (0.91-0.98 at
# 3 stages) and slower for NF4: a lead from the test set, which a rule may
# not rest on. Here: MXFP4 and uint4 g32 (zero = int) at M = 8,
# 16, 32 on Llama-3-8B's q, down, up and Qwen2.5-7B's down, the default
# and the time model's first two mma.sync candidates each at block_k 64
# and 128, stages 3 and 4 (make-sweep.py MODE=depth TOP=2 without its
# 6- and 8-stage variants and wgmma), placeholder weights (a tiling sweep),
# cuBLAS fp16 in the same process. Carry ["build-s84"] (git-ignored),
# made by
#   for f in mxfp4 uint4-g32; do  # ENC: encoding_text of mxfp4, uint4-g32-asym
#     SHAPES="l8b-q 4096 4096
#   l8b-down 4096 14336
#   l8b-up 14336 4096
#   q7b-down 3584 18944" BATCHES=8,16,32 MODE=depth TOP=2 ENC="$enc" JOBS=2 \
#       python3 bench/pipeline-depth/make-sweep.py build build-s84/$f
#     # then, in runs.txt: artifacts *T6C*, *T8C* and wgmma dropped,
#     # --check -> --placeholder-weights, estimates 3 + 0.2 per artifact
#     (cd build-s84/$f && tar cJf artifacts.txz artifacts && rm -rf artifacts)
#   done; cp build-s61/vendor.tgz build-s84/
# 24 runs, about 100 s with the runtime build (BUDGET per format, default 90). Summarize with bench/pipeline-depth/summarize.py.
# Run as  bash bench/results/2026-12-06-s46/bk128-g32.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s84/vendor.tgz
for f in mxfp4 uint4-g32; do
  ZOO_WORK=/tmp/s46g32-$f bash bench/zoo/run-zoo.sh build-s84/$f "${BUDGET:-90}" | tail -2
  mv "$out/zoo.tgz" "$out/bk128-g32-$f.tgz"
done
nvidia-smi -L > "$out/gpu.txt"
