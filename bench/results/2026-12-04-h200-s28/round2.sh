#!/usr/bin/env bash
# Session 28, round 2: as round 1 after the tensor-core kernels load
# y_order before their main loop, checked runs only (no --distinct-perms
# runs), Qwen2.5-7B and -14B (the shapes the batch rule is set on) and
# Llama-3-8B (held out); SortedOutputGpu again.
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
ONLY='^check-' SKIP_TESTS=1 bash bench/act-order/run.sh build-ao28 2>&1 | tail -60
QFUSE_ACT_ORDER_ARTIFACTS="$PWD/build-ao28/src/artifacts/act-order" \
  /tmp/qb-act-order/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='SortedOutputGpu*:PermGuardsGpu*' > "$OUT/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gpu-tests.log" | head -20
