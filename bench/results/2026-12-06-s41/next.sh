#!/usr/bin/env bash
# Prepared in session 41 for the next device call: issue 18's zoo round of
# record on an H200 with the compiler of 11ca05a (the code of 30db72f) (session 40's table
# crossover, session 41's matvec occupancy and wave rules), the way a user
# compiles, no tuning database. Carry ["build-s56"] (git-ignored, on the
# compile machine), made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s56/zoo
#   cp build-s51/vendor.tgz build-s56/    # or: runtime/tools/vendor-headers.sh && tar czf build-s56/vendor.tgz build-vendor
# Rebuild it first if the compiler has changed since. Every plan is checked
# and timed against cuBLAS fp16 in the same process; summarize with
#   /usr/bin/python3 bench/zoo/summarize.py <the unpacked folder holding zoo/>
#   python3 bench/cost-model/zoo_error.py <same> --write-tilings
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s41/next.sh  (the whole
# round took 550 + 33 s on an H100 in session 41; run-zoo.sh leaves out what
# its budget cannot reach and says so in manifest.tsv: a second call with
# the runs left finishes the round, as r3.sh did).
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s56/vendor.tgz
ZOO_WORK=/tmp/s42zoo bash bench/zoo/run-zoo.sh build-s56/zoo "${BUDGET:-560}" | tail -4
mv "$out/zoo.tgz" "$out/round.tgz"
