#!/usr/bin/env bash
# Session 35's second device call: the zoo round of main (f447296), the
# way a user compiles (CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh
# build bench/zoo/plan.json build-s35z/zoo-head; artifacts recompressed as artifacts.tar.xz). Carry ["build-s35z"].
set -uo pipefail
tar xzf build-s35z/vendor.tgz
xz -dc build-s35z/zoo-head/artifacts.tar.xz | tar xf - -C build-s35z/zoo-head
bash bench/zoo/run-zoo.sh build-s35z/zoo-head ${BUDGET:-450}
