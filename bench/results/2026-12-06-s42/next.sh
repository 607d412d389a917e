#!/usr/bin/env bash
# Prepared in session 42 for the next device call: issue 18's zoo round with
# the compiler of a5b2f39 (session 42's tensor-core changes: prmt constants
# in registers, cluster sums pushed to rank 0, one wave's blocks asked of
# ptxas), the way a user compiles, no tuning database. Carry ["build-s61"]
# (git-ignored, on the compile machine), made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s61/zoo
#   cp build-s56/vendor.tgz build-s61/   # or: runtime/tools/vendor-headers.sh && tar czf build-s61/vendor.tgz build-vendor
# (build-s61 also holds next2.sh's steps/ and sparse/). Rebuild it first if
# the compiler has changed since. Summarize with
#   /usr/bin/python3 bench/zoo/summarize.py <the unpacked folder holding zoo/>
#   python3 bench/cost-model/zoo_error.py <same> --write-tilings
# The round took 545 s for 73 of 74 runs on an H100 in session 42: the run
# left goes into a small folder as left.sh's did.
# Run as  BUDGET=560 bash bench/results/2026-12-06-s42/next.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s61/vendor.tgz
ZOO_WORK=/tmp/s43zoo bash bench/zoo/run-zoo.sh build-s61/zoo "${BUDGET:-560}" | tail -4
mv "$out/zoo.tgz" "$out/round.tgz"
