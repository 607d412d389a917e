#!/usr/bin/env bash
# Session 28, round 1: the act_order MLP with gate/up's gated kernel storing
# down_proj's input in sorted order (bench/act-order, PARTS=mlp), against
# the permute launch (aop) and plain int4-g128, Qwen2.5-7B and -14B, batches
# 1-128; PermGuardsGpuTest incl. SortedOutputGpu; the GPU tests that read
# inv_perm (quantize, repack).
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
ONLY="${ONLY:-}" SKIP_TESTS="${SKIP_TESTS:-}" bash bench/act-order/run.sh build-ao28 2>&1 | tail -60
/tmp/qb-act-order/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='*Quantize*:*Repack*:*Gather*:*Perm*' > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gpu-tests.log" | head -20
