#!/usr/bin/env bash
# Session 25, GPU call 5: the zoo round with today's defaults (build-s25d
# carried: vendor.tgz and zoo/ made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s25d/zoo
# at 3ac2952: the defaults with the crossover's 8M bound), its artifacts
# recompressed as artifacts.tar.xz to fit the tree that travels.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"
tar xzf build-s25d/vendor.tgz
xz -dc build-s25d/zoo/artifacts.tar.xz | tar xf - -C build-s25d/zoo
bash bench/zoo/run-zoo.sh build-s25d/zoo 470
