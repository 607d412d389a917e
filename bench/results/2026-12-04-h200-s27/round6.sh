#!/usr/bin/env bash
# Session 27, GPU call 6 (build-s27 carried: vendor.tgz, wgmma-all.qfa and
# wgmma-default.qfa = test/Tools/qfuse-compile/Inputs/wgmma.mlir
# --chip=sm_90a with --qf-wgmma-producer=all and with the default
# (producer on the gated kernels of one k group), compiled by the commit
# after the producer's loop was reordered): every wgmma check case,
# checked, after the last change to the generator.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r6; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar cJf "$out/r6.txz" -C /tmp r6; }
r=build-s27; b=/tmp/qb
tar xzf $r/vendor.tgz
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
for v in all default; do
  timeout 120 $b/bin/qfuse-bench --artifact $r/wgmma-$v.qfa --check --json $res/wgmma-$v.json > $res/wgmma-$v.log 2>&1
  echo "wgmma-$v rc=$? $(grep -c 'FAIL' $res/wgmma-$v.log) FAIL lines, $(grep -c ' ok' $res/wgmma-$v.log) ok lines"
done
pack
log done
