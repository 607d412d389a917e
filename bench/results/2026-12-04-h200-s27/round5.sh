#!/usr/bin/env bash
# Session 27, GPU call 5 (build-s27 carried: vendor.tgz; g1-g3 from
# bench/wgmma-producer/make-ab.sh with SHAPES the training gate/up
# (14336x4096, 18944x3584, gated), BATCHES=128,256,
# FLAGS_B=--qf-wgmma-producer=off and TILING one k group: g1 block_m 64
# stages 4, g2 block_m 128 stages 4, g3 block_m 64 stages 6): the gated
# kernel of one k group with (-a) and without (-b) the producer at 128 and
# 256, against r4/gu's default (gate and up as one launch + silu_mul).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r5; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar cJf "$out/r5.txz" -C /tmp r5; }
r=build-s27; b=/tmp/qb
tar xzf $r/vendor.tgz
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
export QFUSE_BENCH=$b/bin/qfuse-bench
for z in g1 g2 g3; do
  log "$z"
  ZOO_WORK=$res/$z OUT=$res/$z-out timeout 150 bash bench/zoo/run-zoo.sh $r/$z 120 2>&1 | tail -2
  pack
done
log done
