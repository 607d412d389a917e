#!/usr/bin/env bash
# Session 36, device call 1: the A/B of the refitted mma.sync time model on
# the zoo (the test set), every cell whose sm_90a default tiling it changes
# (360 (run, batch) cells of 60 runs; -a the compiler before, -b after).
# Carry ["build-s37"], made on the compile machine by
#   python3 bench/cost-model/tiling_changes.py OLD NEW --chip sm_90a --json C.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW C.json build-s37/zab
#   cp build-s36/vendor.tgz build-s37/
# (OLD: qfuse-compile of the commit before the refit, NEW: after).
# Run as  BUDGET=<s> bash bench/results/2026-12-05-s36/r1.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
tar xzf build-s37/vendor.tgz
tar xJf build-s37/zab/artifacts.txz -C build-s37/zab
ZOO_WORK=/tmp/s36r1 bash bench/zoo/run-zoo.sh build-s37/zab "${BUDGET:-520}" 2>&1 | tail -4
grep -h "rel err" /tmp/s36r1/zoo/*.log | grep -vc " ok" | sed 's/^/checks not ok: /'
python3 bench/wgmma-producer/ab-summary.py /tmp/s36r1 > /tmp/s36r1/zoo/ab-summary.md 2>&1
tail -20 /tmp/s36r1/zoo/ab-summary.md
tar czf "$out/zoo.tgz" -C /tmp/s36r1 zoo
