#!/usr/bin/env bash
# Session 42, device call 2. Carry ["build-s57"] (git-ignored):
# - build-s57/left: the one run next.sh's budget left of the zoo round
#   (s3584x4096 in fp8; its artifact from build-s56/zoo, the compiler of
#   11ca05a, the run line's path moved there), and vendor.tgz.
# No QFUSE_BENCH: run-zoo.sh builds the runtime itself.
# Run as  bash bench/results/2026-12-06-s42/left.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s57/vendor.tgz
ZOO_WORK=/tmp/s42left bash bench/zoo/run-zoo.sh build-s57/left 150 | tail -4
mv "$out/zoo.tgz" "$out/round-left.tgz"
