#!/usr/bin/env bash
# Session 20, GPU call 1 (from the repository root, build-round carried):
# the act_order round (bench/act-order/run.sh: PermGuards tests, Qwen2.5-7B
# parts ao / aog / aon / int4 checked and timed, the fallback for perms
# that differ) and the every-encoding sweep checked on the GPU (every
# packed weight type of the dialect's round-trip tests at batches 1, 3, 8,
# 17, 100, 512, among them act_order + 2:4 on the fallback).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"
tar xzf build-round/ao.tgz; tar xzf build-round/vendor.tgz
bash bench/act-order/run.sh build-act-order 2>&1 | tail -40
bench=/tmp/qb-act-order/bin/qfuse-bench
mkdir -p /tmp/ee
(cd build-act-order && timeout 240 $bench --artifact extra/every-encoding.qfa --check \
  --json /tmp/ee/every-encoding-m1to512.json) > /tmp/ee/every-encoding.log 2>&1
echo "every-encoding rc=$?" | tee -a /tmp/ee/every-encoding.log
grep -ciE "fail" /tmp/ee/every-encoding.log; tail -5 /tmp/ee/every-encoding.log
tar czf "$out/ee.tgz" -C /tmp ee
ls -la "$out"
