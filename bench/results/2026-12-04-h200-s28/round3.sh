#!/usr/bin/env bash
# Session 28, round 3: the committed rule (gate/up stores down_proj's input
# in sorted order up to batch 16): `mlpn` (RMSNorm, gate/up, down_proj as in
# a decoder layer), act_order against plain int4-g128, checked, Qwen2.5-7B,
# -14B and Llama-3-8B, batches 1-128; Qwen2.5-7B on the fallback
# (--distinct-perms); PermGuardsGpuTest with SortedOutputGpu.
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
ONLY='^check-|^fallback-qwen2.5-7b' bash bench/act-order/run.sh build-ao28 2>&1 | tail -40
