#!/usr/bin/env bash
# Session 26, GPU call 2 (build-s26 carried: vendor.tgz, wide/ from
# `MODE=wide BATCHES=64,128,48 bench/pipeline-depth/make-sweep.py`): every
# tiling of the mma.sync and wgmma kernels the grid holds, on training
# shapes, timed with placeholder weights against cuBLAS fp16 (a tiling
# sweep: the kernels are the checked ones of call 1 and the zoo rounds; the
# defaults picked from it get checked in the zoo round).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r2; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
r=build-s26; b=/tmp/qb
tar xzf $r/vendor.tgz
tar xJf $r/wide/artifacts.tar.xz -C $r/wide
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; exit 1; }
log sweep
QFUSE_BENCH=$b/bin/qfuse-bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh $r/wide 470 2>&1 | tail -20
log done
