#!/usr/bin/env bash
# Session 27, GPU call 4 (build-s27 carried: vendor.tgz; gu, xzoo1, xzoo2):
#  1. gu: training gate/up (Llama-3-8B 14336x4096, Qwen2.5-7B 18944x3584)
#     at 128-512, the default compile (-a: gate and up as one wgmma launch
#     and a silu_mul from 128) against --fuse=all (-b: the gated kernel,
#     fed by the producer at 512), checked;
#  2. xzoo1 / xzoo2: zoo gate/up (not tuned on) at 512, int4-g128, NVFP4,
#     int8: -new --fuse=all (gated, producer) against -old the default
#     (xzoo1) and against --fuse=all --qf-wgmma-producer=off (xzoo2),
#     checked.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r4; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar cJf "$out/r4.txz" -C /tmp r4; }
r=build-s27; b=/tmp/qb
tar xzf $r/vendor.tgz
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
export QFUSE_BENCH=$b/bin/qfuse-bench
for z in gu xzoo1 xzoo2; do
  log "$z"
  ZOO_WORK=$res/$z OUT=$res/$z-out timeout 250 bash bench/zoo/run-zoo.sh $r/$z 220 2>&1 | tail -3
  pack
done
log done
