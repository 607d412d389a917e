#!/usr/bin/env bash
# Session 21, GPU call 4 (build-s22 carried: checks2.tgz, sr-u4.tgz,
# vendor.tgz): integer zeros of a step's groups copied as one word per step
# (zeroWordPerStep) on top of the scale runs (e1d7347): mma-formats,
# every-encoding, mma-odd and wgmma compiled with it, checked; uint4-g32-asym
# on four zoo shapes, e1d7347's artifacts (sr-u4.tgz) against the change's,
# one qfuse-bench process per shape, every plan checked.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r4; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r4.tgz" -C /tmp r4; }
r=build-s22; b=/tmp/qb
log build
tar xzf $r/vendor.tgz
[ -x $b/bin/qfuse-bench ] || { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
mkdir -p /tmp/c2 /tmp/base; tar xzf $r/checks2.tgz -C /tmp/c2; tar xzf $r/sr-u4.tgz -C /tmp/base
log "zoo uint4-g32, scale runs vs + zero word"
for s in s8192x2048 s2048x11008 s1024x8192 s2048x3584; do
  nk=${s#s}; n=${nk%x*}; k=${nk#*x}
  gemms=""; for m in 1 2 4 8 16 32 64 128; do gemms="$gemms --gemm ${m}x${n}x${k}"; done
  timeout 60 $b/bin/qfuse-bench --artifact /tmp/base/$s-uint4-g32-asym.qfa --artifact /tmp/c2/u4/$s-uint4-g32-asym.qfa \
    --batch 1,2,4,8,16,32,64,128 $gemms --check --json $res/zoo-$s.json > $res/zoo-$s.log 2>&1
  echo "zoo $s rc=$? $(grep -cE 'FAIL' $res/zoo-$s.log) FAIL lines"
done; pack
log checks
for a in mma-formats every-encoding mma-odd wgmma; do
  timeout 100 $b/bin/qfuse-bench --artifact /tmp/c2/$a.qfa --check --json $res/check-$a.json > $res/check-$a.log 2>&1
  echo "$a rc=$? $(grep -cE 'FAIL' $res/check-$a.log) FAIL lines, $(grep -c 'check ' $res/check-$a.log) checks"
  pack
done
log done
