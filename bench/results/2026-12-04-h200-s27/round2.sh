#!/usr/bin/env bash
# Session 27, GPU call 2 (build-s27 carried: vendor.tgz, wgmma-prod.qfa and
# ab1 rebuilt by the producer with one wgmma group in flight while the next
# step decodes, sweep1.txz = `SHAPES="l8b-q 4096 4096 / l8b-down 4096 14336
# / q7b-q 3584 3584" BATCHES=32,64,128 MODE=wgmma FLAGS=--qf-wgmma-producer
# bench/pipeline-depth/make-sweep.py build build-s27/sweep1`):
#  1. every wgmma check case with the producer, checked;
#  2. ab1 again (default vs producer at 128-512, training shapes, checked);
#  3. sweep1: the wgmma grid with the producer at 32-128 (placeholder
#     weights: timing only) beside the default.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r2; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar cJf "$out/r2.txz" -C /tmp r2; }
r=build-s27; b=/tmp/qb
tar xzf $r/vendor.tgz; tar xJf $r/sweep1.txz -C $r
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
export QFUSE_BENCH=$b/bin/qfuse-bench
log "wgmma check cases, producer"
timeout 120 $b/bin/qfuse-bench --artifact $r/wgmma-prod.qfa --check --json $res/wgmma-prod.json > $res/wgmma-prod.log 2>&1
echo "wgmma-prod rc=$? $(grep -c 'FAIL' $res/wgmma-prod.log) FAIL lines, $(grep -c ' ok' $res/wgmma-prod.log) ok lines"
pack
log ab1
ZOO_WORK=$res/ab1 OUT=$res/ab1-out timeout 200 bash bench/zoo/run-zoo.sh $r/ab1 150 2>&1 | tail -3
pack
log sweep1
ZOO_WORK=$res/sweep1 OUT=$res/sweep1-out timeout 260 bash bench/zoo/run-zoo.sh $r/sweep1 240 2>&1 | tail -12
pack
log done
