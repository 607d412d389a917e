#!/usr/bin/env bash
# Prepared in session 43: issue 18's zoo round of record with main's
# compiler of 6b9471e (the split-K sums shared by the k groups, the
# activation copies of passes under 8 rows), the default compile for
# sm_90a, no tuning database. Carry ["build-s69"] (git-ignored), made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s69/zoo
#   cp build-s61/vendor.tgz build-s69/
# Rebuild it first if the compiler has changed since. Summarize as session
# 43's README says (zoo-round/). Session 43's round took 417 s for all 74 runs
# on an H100.
# Run as  BUDGET=550 bash bench/results/2026-12-06-s43/zoo.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s69/vendor.tgz
ZOO_WORK=/tmp/s44zoo bash bench/zoo/run-zoo.sh build-s69/zoo "${BUDGET:-550}" | tail -4
mv "$out/zoo.tgz" "$out/round.tgz"
