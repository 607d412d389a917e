#!/usr/bin/env bash
# Prepared in session 29 (no GPU that session), to run first on the H200:
# branch `oproj`'s GPU tests and its two parts that change most. Made here
# with (from the worktree of branch oproj, committed first, since run.sh
# builds the runtime from a git archive of HEAD):
#   PARTS="attno qkvn" MODELS="qwen2.5-7b:3584:512:18944 qwen2.5-14b:5120:1024:13824 llama3-8b:4096:1024:14336" \
#     bench/act-order/make-artifacts.sh build build-ao29a
#   mkdir -p build-s29 && tar cJf build-s29/a.txz build-ao29a
# and run with carry ["build-s29"] as
#   tar xJf build-s29/a.txz && bash bench/results/2026-12-04-h200-s29/round1.sh
# - PermGuardsGpuTest: SortedAttentionGpu and SortedRotaryAttentionGpu
#   (attention stores o_proj's input in sorted order, bit for bit against
#   the permute launch), PermGuardsNormGpu (the staged permuted norm, bit
#   for bit against the plain norm and the permute launch), SortedOutputGpu
#   (gate/up's fallback now runs the row-staged permuted silu_mul),
#   SiluMulPrologueGpu (the row-staged fold), PermGuardsGpu (the vectorized
#   permute);
# - `attno` (rotary attention + o_proj) and `qkvn` (RMSNorm + q/k/v): every
#   plan checked and timed, act_order (ao), without the fold (aop) and
#   plain int4-g128, three models, batches 1-128; Qwen2.5-14B's rows of
#   5120 take the norm's partial last vector.
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
ONLY='^check-' bash build-ao29a/run.sh build-ao29a 2>&1 | tail -60
