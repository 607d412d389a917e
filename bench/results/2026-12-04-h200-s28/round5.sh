#!/usr/bin/env bash
# Session 28, round 5: attention stores o_proj's input in sorted order up to
# batch 16. PermGuardsGpuTest (SortedAttentionGpu: bit for bit against the
# permute launch, valid positions), and `attno` (attention + o_proj;
# qfuse-bench's random positions leave the attention kernel little to do,
# so its times are those of o_proj and its input's order: a profile),
# act_order (ao), with --act-order-sorted-output=false (aop) and plain
# int4-g128, Qwen2.5-7B, -14B, Llama-3-8B, batches 1-128.
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
ONLY='^check-' bash build-ao28/run.sh build-ao28 2>&1 | tail -60
