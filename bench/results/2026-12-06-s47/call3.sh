#!/usr/bin/env bash
# Session 47, device call 3: the 7 zoo runs call 2's budget left out
# (s3584x4096 in uint4-g32-asym, int4-pc, nf4, nvfp4, mxfp4, int8, fp8),
# the same artifacts. Carry ["build-s86"], made from build-s69 by keeping
# those 7 lines of runs.txt (paths moved to build-s86) and their artifacts.
# Run as  bash bench/results/2026-12-06-s47/call3.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s86/vendor.tgz
ZOO_WORK=/tmp/s47zoo3 bash bench/zoo/run-zoo.sh build-s86/zoo "${BUDGET:-150}" | tail -3
