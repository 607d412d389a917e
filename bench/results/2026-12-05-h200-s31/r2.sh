#!/usr/bin/env bash
# Session 31, call 2 (carry ["build-s31"]): bench/results/2026-12-04-h200-s29
# round4.sh, the mma tie-break on the zoo (issue 18): 13 zoo shapes, fp8 and
# int8 at batches 4-16, `-new` = the tie-break (artifacts made when it was
# the default), `-old` = --mma-tie-break=false, main's default picks; every
# plan checked and timed against cuBLAS fp16 in one process. qfuse-bench is
# call 1's build of the artifacts' runtime where the machine still has it,
# else built here from this tree.
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"; res=/tmp/s31r2; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
tar xJf build-s31/tb.txz
bench=/tmp/qb-s31/bin/qfuse-bench
if [ ! -x $bench ]; then
  tar xzf build-s31/vendor.tgz
  bench=/tmp/qb-r2/bin/qfuse-bench
  log build
  { cmake -G Ninja -S . -B /tmp/qb-r2 -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
      -DCMAKE_BUILD_TYPE=Release &&
    cmake --build /tmp/qb-r2 -j"$(nproc)" --target qfuse-bench; } > $res/build.log 2>&1 \
    || { tail -30 $res/build.log; tar czf "$out/r2.tgz" -C /tmp s31r2; exit 1; }
fi
log "zoo check with $bench"
QFUSE_BENCH=$bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh build-tb29 ${BUDGET:-470} 2>&1 | tail -60
log done
