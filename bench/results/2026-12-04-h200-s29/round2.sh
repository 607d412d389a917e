#!/usr/bin/env bash
# Prepared in session 29, to run after round1.sh passes: the vectorized
# permute kernel (`o`: o_proj on its own input, a permute launch of its
# own) and the row-staged silu_mul fold (`downs`: down_proj behind a
# silu_mul; ao = the fold, aop = silu_mul + permute launches), three
# models, batches 1-128, every plan checked; the fallback of Qwen2.5-7B's
# parts with a perm per weight. Made with
#   PARTS="o downs" MODELS="qwen2.5-7b:3584:512:18944 qwen2.5-14b:5120:1024:13824 llama3-8b:4096:1024:14336" \
#     bench/act-order/make-artifacts.sh build build-ao29b
#   mkdir -p build-s29 && tar cJf build-s29/b.txz build-ao29b
# run with carry ["build-s29"] as
#   tar xJf build-s29/b.txz && bash bench/results/2026-12-04-h200-s29/round2.sh
set -uo pipefail
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
SKIP_TESTS=1 ONLY='^check-|^fallback-qwen2.5-7b' bash build-ao29b/run.sh build-ao29b 2>&1 | tail -60
