#!/usr/bin/env bash
# Session 21, GPU call 3, in two parts for the carry limit: `zoo`
# (build-s21 carried: sr.tgz, base-fp4.tgz, base-u4.tgz, vendor.tgz), then
# `checks` (build-s21c carried: checks.tgz, vendor.tgz). Small groups' scales copied as
# one run per row and step (NVFP4: 8 bytes instead of 8 words; f16 scales
# of groups of 32: 4 or 8 bytes):
#  - every check artifact of bench/make-artifacts.sh (formats, matvec,
#    mma-formats, mma-bf16, wgmma, mma-odd, mma-fused, every-encoding),
#    compiled with the change, checked against the C++ reference;
#  - four zoo shapes in int4-g128, NVFP4, MXFP4, NF4 and uint4-g32-asym at
#    batches 1-128 (sm_90a, no database, default fusions), main's artifacts
#    (base-fp4.tgz: session 20's round 3, whose tensor-core code main still
#    has; base-u4.tgz: uint4-g32 by main at 918b12c) against the change's,
#    in one qfuse-bench process per shape, every plan checked (main's
#    int4-g128 is not carried: its kernels are unchanged).
set -uo pipefail
part="${1:-zoo}"
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3$part; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r3$part.tgz" -C /tmp r3$part; }
r=build-s21; b=/tmp/qb
[ "$part" = checks ] && r=build-s21c
log build
tar xzf $r/vendor.tgz
[ -x $b/bin/qfuse-bench ] || { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
if [ "$part" = checks ]; then
mkdir -p /tmp/chk; tar xzf $r/checks.tgz -C /tmp/chk
log checks
for a in formats formats-matvec mma-formats mma-bf16 wgmma mma-odd mma-fused every-encoding; do
  timeout 150 $b/bin/qfuse-bench --artifact /tmp/chk/$a.qfa --check --json $res/check-$a.json > $res/check-$a.log 2>&1
  echo "$a rc=$? $(grep -cE 'FAIL' $res/check-$a.log) FAIL lines, $(grep -c 'check ' $res/check-$a.log) checks"
done; pack
else
mkdir -p /tmp/new /tmp/base; tar xzf $r/sr.tgz -C /tmp/new
tar xzf $r/base-fp4.tgz -C /tmp/base; tar xzf $r/base-u4.tgz -C /tmp/base/artifacts
log "zoo shapes, main vs scale runs"
for s in s8192x2048 s2048x11008 s1024x8192 s2048x3584; do
  nk=${s#s}; n=${nk%x*}; k=${nk#*x}
  arts=""; for f in int4-g128 nvfp4 mxfp4 nf4 uint4-g32-asym; do
    [ -f /tmp/base/artifacts/$s-$f.qfa ] && arts="$arts --artifact /tmp/base/artifacts/$s-$f.qfa"
    arts="$arts --artifact /tmp/new/$s-$f.qfa"; done
  gemms=""; for m in 1 2 4 8 16 32 64 128; do gemms="$gemms --gemm ${m}x${n}x${k}"; done
  timeout 200 $b/bin/qfuse-bench $arts --batch 1,2,4,8,16,32,64,128 $gemms --check --json $res/zoo-$s.json > $res/zoo-$s.log 2>&1
  echo "zoo $s rc=$? $(grep -cE 'FAIL' $res/zoo-$s.log) FAIL lines"
  pack
done
fi
log done
