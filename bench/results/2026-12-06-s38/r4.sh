#!/usr/bin/env bash
# Session 38, the same warm machine after r2.sh: the seven zoo runs r2's
# budget left (build-s41c/zoo/runs.txt: those lines of build-s41b's list,
# whose artifacts it reads), then r3.sh's training sweeps as far as the
# budget goes. Carry ["build-s41b", "build-s41c", "build-s42", "build-s39"].
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
budget=${BUDGET:-240}
t0=$(date +%s)
xz -dc build-s41b/zoo/artifacts.tar.xz | tar xf - -C build-s41b/zoo
QFUSE_BENCH=build-gpu/bin/qfuse-bench ZOO_WORK=/tmp/zoo-c \
  bash bench/zoo/run-zoo.sh build-s41c/zoo 110 | tail -3
mv "$out/zoo.tgz" "$out/zoo-c.tgz"
BUDGET=$(( budget - ($(date +%s) - t0) )) bash bench/results/2026-12-06-s38/r3.sh | tail -8
