#!/usr/bin/env bash
# Session 23, GPU call 1 (build-s23 carried: vendor.tgz, steps.tar.xz, zoo/ with
# its artifacts as artifacts.tar.xz: the gzip of make-zoo-artifacts.sh, 21 MB, is
# over what a call carries).
# steps/: Llama-3-8B int4-g128 whole linear step (bench/decode_step_ir.py
# --full-step, with and without --gated), qfuse-compile --chip=sm_90a (the
# H200 variant of the Python commands' default set), no tuning db, default
# fuse; timed against cuBLAS fp16 in the same process on placeholder codes.
# zoo/: CHIP=sm_90a bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json
# build-s23/zoo (every plan checked and timed against cuBLAS fp16).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r1; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r1.tgz" -C /tmp r1; }
r=build-s23; b=/tmp/qb
log build
tar xzf $r/vendor.tgz; tar xJf $r/steps.tar.xz -C $r; tar xJf $r/zoo/artifacts.tar.xz -C $r/zoo
[ -x $b/bin/qfuse-bench ] || { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
log steps
for m in 1 16 64 128; do
  for g in gated plain; do
    n=l8b-$g-b$m
    timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m --artifact $r/steps/$n.qfa --placeholder-weights --json $res/$n.json > $res/$n.log 2>&1
    echo "$n rc=$? $(grep -iE 'speedup|ratio|cublas' $res/$n.log | tail -2 | tr '\n' ' ')"
  done
done
pack
log zoo
ZOO_WORK=/tmp/zooround QFUSE_BENCH=$b/bin/qfuse-bench bash $r/zoo/run-zoo.sh $r/zoo 330 > $res/zoo-run.log 2>&1
tail -5 $res/zoo-run.log
cp $out/zoo.tgz $res/ 2>/dev/null; rm -f $out/zoo.tgz
pack
log done
