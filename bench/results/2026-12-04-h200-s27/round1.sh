#!/usr/bin/env bash
# Session 27, GPU call 1 (build-s27 carried: vendor.tgz, wgmma-prod.qfa =
# test/Tools/qfuse-compile/Inputs/wgmma.mlir --chip=sm_90a
# --qf-wgmma-producer; ab1-ab3 from bench/wgmma-producer/make-ab.sh):
#  1. the warp-specialized wgmma kernel on every wgmma check case, checked;
#  2. ab1: training shapes, default compile (-a) vs --qf-wgmma-producer
#     (-b) at batches 128, 256, 512, checked and timed;
#  3. ab2 / ab3: the same shapes on an explicit wgmma tiling at batch 64
#     (block_m 64) and 32 (block_m 32), without (-a) and with (-b) the
#     producer, checked and timed.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r1; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar cJf "$out/r1.txz" -C /tmp r1; }
r=build-s27; b=/tmp/qb
tar xzf $r/vendor.tgz
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
export QFUSE_BENCH=$b/bin/qfuse-bench
log "wgmma check cases, producer"
timeout 120 $b/bin/qfuse-bench --artifact $r/wgmma-prod.qfa --check --json $res/wgmma-prod.json > $res/wgmma-prod.log 2>&1
echo "wgmma-prod rc=$? $(grep -c 'FAIL' $res/wgmma-prod.log) FAIL lines, $(grep -c ' ok' $res/wgmma-prod.log) ok lines"
pack
for ab in ab1 ab2 ab3; do
  log "$ab"
  ZOO_WORK=$res/$ab OUT=$res/$ab-out timeout 200 bash bench/zoo/run-zoo.sh $r/$ab 180 2>&1 | tail -14
  pack
done
log done
