#!/usr/bin/env bash
# Session 41, device call 2: issue 18's zoo round of record with the
# compiler of f8f1cb4 (session 40's table crossover and this session's
# matvec occupancy rule), the way a user compiles, no tuning database.
# Carry ["build-s52"] (git-ignored), made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s52/zoo
#   cp build-s51/vendor.tgz build-s52/
# Every plan is checked and timed against cuBLAS fp16 in the same process;
# summarize with
#   python3 bench/zoo/summarize.py <the unpacked zoo folder>
#   python3 bench/cost-model/zoo_error.py <same> --write-tilings
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s41/r2.sh  (run-zoo.sh
# leaves out what its budget cannot reach and says so in manifest.tsv).
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s52/vendor.tgz
ZOO_WORK=/tmp/s41zoo bash bench/zoo/run-zoo.sh build-s52/zoo "${BUDGET:-560}" | tail -4
mv "$out/zoo.tgz" "$out/round.tgz"
