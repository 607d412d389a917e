#!/usr/bin/env bash
# Session 37 (no GPU lent; prepared for the next session's first call):
# two A/Bs on zoo cells (the test set), each plan checked and timed against
# cuBLAS fp16 in its own process (bench/zoo/run-zoo.sh):
#   dec: NF4, NVFP4, MXFP4 on 11 zoo shapes (8 of >= 8M weights, 3 below) at
#        batches 1, 4, 16, 32, 64, 128; -a compiled by 071b8f0, -b by
#        cf8c1ad (the register table lookup with sign-mode masks, e2m1 by
#        its f16 high bytes, E4M3 scale pairs by one cvt): 33 runs x 2,
#        198 cells;
#   ptr: int4-g128 and NF4 on the same shapes at 1, 16, 64, 128; -a as
#        compiled, -b with --nvptx-short-ptr (32-bit shared pointers): 20
#        runs x 2, 80 cells.
# Carry ["build-s40"] (git-ignored), made on the compile machine by
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s40/decode-cells.json build-s40/dec
#   python3 bench/cost-model/make-zoo-ab.py NEW NEW_SHORTPTR build-s40/shortptr-cells.json build-s40/ptr
#   cp build-s39/vendor.tgz build-s40/
# (the cell lists are in this folder: decode-cells.json, shortptr-cells.json;
# NEW_SHORTPTR is a wrapper that runs NEW with --nvptx-short-ptr).
# Run as  BUDGET=<s> bash bench/results/2026-12-05-s37/r1.sh  (about 420 s)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
budget="${BUDGET:-540}"
tar xzf build-s40/vendor.tgz
for ab in dec ptr; do
  tar xJf build-s40/$ab/artifacts.txz -C build-s40/$ab
done
ZOO_WORK=/tmp/s37dec bash bench/zoo/run-zoo.sh build-s40/dec $(( budget * 3 / 5 )) 2>&1 | tail -3
QFUSE_BENCH=build-gpu/bin/qfuse-bench ZOO_WORK=/tmp/s37ptr \
  bash bench/zoo/run-zoo.sh build-s40/ptr $(( budget * 2 / 5 - 20 )) 2>&1 | tail -3
for ab in dec ptr; do
  grep -h "rel err" /tmp/s37$ab/zoo/*.log | grep -vc " ok" | sed "s/^/$ab checks not ok: /"
  python3 bench/wgmma-producer/ab-summary.py /tmp/s37$ab > /tmp/s37$ab/zoo/ab-summary.md 2>&1
  tail -12 /tmp/s37$ab/zoo/ab-summary.md
  tar czf "$out/$ab.tgz" -C /tmp/s37$ab zoo
done
rm -f "$out/zoo.tgz"
