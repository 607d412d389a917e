#!/usr/bin/env bash
# Session 43, the one-wave rule's A/B continued: the pairs next2.sh's budget
# left (from s5120x13824-nvfp4 on). Carry ["build-s66"] (git-ignored), made by
#   mkdir -p build-s66/ab && cp build-s62/ab/{COMMIT,COMPILE,artifacts.txz} build-s66/ab/
#   tail -n +11 build-s62/ab/runs.txt | sed 's#build-s62/ab#build-s66/ab#g' > build-s66/ab/runs.txt
#   cp build-s61/vendor.tgz build-s66/
# Every plan checked; summarize with bench/wgmma-producer/ab-summary.py
# over this folder (both calls' JSON).
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s66/vendor.tgz
ZOO_WORK=/tmp/s43ab2 bash bench/zoo/run-zoo.sh build-s66/ab "${BUDGET:-230}" | tail -4
mv "$out/zoo.tgz" "$out/minncta-ab-rest.tgz"
