#!/usr/bin/env bash
# Session 27, GPU call 7 (build-s27 carried: vendor.tgz, gz): zoo gate/up
# (11008x4096, 14336x3584, 17920x5120; int4-g128, NVFP4) at 128 and 256:
# the gated kernel with one k group fed by the producer (-new, the tiling
# rule after this round), the gated kernel as before (-old: block_m 64 in
# two k groups, the previous compiler) and the default's unfused pair
# (-unf), all checked.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r7; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar cJf "$out/r7.txz" -C /tmp r7; }
r=build-s27; b=/tmp/qb
tar xzf $r/vendor.tgz
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
export QFUSE_BENCH=$b/bin/qfuse-bench
ZOO_WORK=$res/gz OUT=$res/gz-out timeout 330 bash bench/zoo/run-zoo.sh $r/gz 300 2>&1 | tail -3
pack
log done
