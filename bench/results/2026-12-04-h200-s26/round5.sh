#!/usr/bin/env bash
# Session 26, GPU call 5 (build-s26 carried: vendor.tgz, xzoo2/): mma.sync's
# block_m 128 candidates from M = 512 instead of 128 (set on the training
# sweeps of calls 2-3), on seven zoo weights, int4-g128 / NVFP4 / int8,
# batches 128-384, --chip=sm_90 (mma.sync everywhere). xzoo2 was made by
# `ENTRIES="s1024x8192 s2048x2048 s3072x3072 s3584x4096 s2048x11008
# s8192x2048 s4096x3584" FORMATS="int4-g128 nvfp4 int8"
# BATCHES=128,192,256,384 CHIP=sm_90 OLD_FLAGS=--fuse=default
# bench/crossover/make-zoo-check.sh` twice, with qfuse-compile at b1a13b3
# (-old) and with the change (-new).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r5; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
r=build-s26; b=/tmp/qb
tar xzf $r/vendor.tgz
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; exit 1; }
log "zoo check"
QFUSE_BENCH=$b/bin/qfuse-bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh $r/xzoo2 500 2>&1 | tail -12
log done
