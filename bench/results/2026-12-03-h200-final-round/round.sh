#!/usr/bin/env bash
# Session 18's last GPU round, one call: (1) the act_order tests
# (PermGuardsTest, PermGuardsGpu*, PermGuardsNormGpu*: the permuted RMSNorm
# kernel and the matvec on permuted input) and (2) the measured crossover on
# zoo shapes it was not set on (new default vs --tensor-core-min-batch=4),
# then (3) the act_order timings of Qwen2.5-7B's parts against plain
# int4-g128. Carries build-act-order (MODELS=qwen2.5-7b:3584:512:18944
# bench/act-order/make-artifacts.sh build build-act-order), build-xzoo
# (bench/crossover/make-zoo-check.sh build build-xzoo, runs.txt cut to s1024x8192 and
# s2048x11008 in int4-g128, nvfp4 and int8 with estimates of 3 s) and
# build-vendor.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"
# The carry limit: build-act-order/src comes without the runtime's sources
# (the tree's own, at the same commit) and lends its vendored headers.
for d in CMakeLists.txt cmake format runtime scripts test unittests; do
  cp -r "$d" build-act-order/src/
done
[ -d build-vendor ] || cp -r build-act-order/src/build-vendor build-vendor
ONLY=none bash bench/act-order/run.sh build-act-order 2>&1 | tail -15
bash bench/zoo/run-zoo.sh build-xzoo 120 2>&1 | tail -12
ONLY='^(check|fallback)-qwen2.5-7b' SKIP_TESTS=1 bash bench/act-order/run.sh build-act-order 2>&1 | tail -25
ls -la "$out"
