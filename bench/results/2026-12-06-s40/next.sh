#!/usr/bin/env bash
# Prepared in session 40 for the next device call: issue 18's zoo round of
# record with the compiler of 595c617 (session 40's table crossover), the
# way a user compiles, no tuning database. Carry ["build-s50"] (git-ignored,
# on the compile machine), made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s50/zoo
#   cp build-s48/vendor.tgz build-s50/
# (74 runs; 8.4 MB packed, so one carry holds the whole round). Rebuild it
# first if the compiler has changed since. Every plan is checked and timed
# against cuBLAS fp16 in the same process; summarize with
#   python3 bench/zoo/summarize.py <the unpacked zoo folder>
#   python3 bench/cost-model/zoo_error.py <same> --write-tilings
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s40/next.sh  (about 560 s;
# run-zoo.sh leaves out what its budget cannot reach and says so in
# manifest.tsv: a second call with the runs left finishes the round).
set -uo pipefail
tar xzf build-s50/vendor.tgz
ZOO_WORK=/tmp/s40zoo bash bench/zoo/run-zoo.sh build-s50/zoo "${BUDGET:-560}" | tail -4
