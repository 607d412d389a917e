#!/usr/bin/env bash
# Session 41, device call 3. Carry ["build-s53"] (git-ignored):
# - build-s53/ao, made by
#     PARTS="qkvn downs o" MODELS="qwen2.5-7b:3584:512:18944" \
#       bench/act-order/make-artifacts.sh build build-s53/ao
#   (the compiler of f8f1cb4): issue 20's act_order round on Qwen2.5-7B,
#   its check-* runs (act_order against plain int4-g128 and cuBLAS fp16 in
#   one process, every plan checked) and the fallback-* runs never run
#   before (a perm per weight: the fallback for perms that differ, checked);
# - build-s53/left: the three runs r2.sh's budget left of the zoo round
#   (s3584x4096 in mxfp4, int8, fp8; their artifacts from build-s52/zoo,
#   the run lines' paths moved there), and vendor.tgz.
# Run as  bash bench/results/2026-12-06-s41/r3.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s53/vendor.tgz
ACT_ORDER_WORK=/tmp/s41ao bash bench/act-order/run.sh build-s53/ao 2>&1 | tail -25
QFUSE_BENCH=/tmp/qb-act-order/bin/qfuse-bench ZOO_WORK=/tmp/s41left \
  bash bench/zoo/run-zoo.sh build-s53/left 150 | tail -4
mv "$out/zoo.tgz" "$out/round-left.tgz"
