#!/usr/bin/env bash
# Session 26, GPU call 6: the zoo round with today's defaults (build-s26
# carried: vendor.tgz and zoo/ made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s26/zoo
# with the wgmma row bound 2048), its artifacts recompressed as
# artifacts.tar.xz to fit the tree that travels.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"
tar xzf build-s26/vendor.tgz
xz -dc build-s26/zoo/artifacts.tar.xz | tar xf - -C build-s26/zoo
bash bench/zoo/run-zoo.sh build-s26/zoo 410
