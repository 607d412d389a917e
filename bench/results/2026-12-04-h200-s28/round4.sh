#!/usr/bin/env bash
# Session 28, round 4: what is left of act_order's cost, o_proj (`o`: its
# input from attention, a permute launch of its own), act_order against
# plain int4-g128, checked, Qwen2.5-7B, -14B and Llama-3-8B, batches 1-128.
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
ONLY='^check-' SKIP_TESTS=1 bash bench/act-order/run.sh build-ao28 2>&1 | tail -32
