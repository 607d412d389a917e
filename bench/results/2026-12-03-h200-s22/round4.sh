#!/usr/bin/env bash
# Session 22, GPU call 4 (build-s22c carried as in round3.sh). The gated
# wgmma default chosen on the training shapes of call 3 (gw/: block_m 64,
# two k groups, from M = 64 on gate weights of >= 32M elements), tested on
# zoo gate/up shapes (gz/, artifacts of call 3's carry: the "mma" artifact
# is the default before, the "W64S2T4" one the new default's tiling, which
# qf-select-tiling now picks for these shapes at M = 64-256), timed in one
# process per (shape, batch) against cuBLAS fp16, placeholder weights
# (the kernels' time does not depend on the values; call 3 checked the
# tilings on random weights).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r4; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r4.tgz" -C /tmp r4; }
r=build-s22c; b=/tmp/qb
log build
tar xzf $r/vendor.tgz; tar xzf $r/gw.tgz -C /tmp
[ -x $b/bin/qfuse-bench ] || { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
cd /tmp/gz
for s in 18944x3584 11008x4096 14336x5120 28672x8192; do
  n=${s%x*}; k=${s#*x}
  for m in 64 128 256; do
    name=gu$s-b$m
    timeout 60 $b/bin/qfuse-bench --artifact artifacts/$name-mma.qfa --artifact artifacts/$name-W64S2T4.qfa \
      --batch $m --gemm ${m}x$((2 * n))x$k --placeholder-weights --json $res/$name.json > $res/$name.log 2>&1
    echo "$name rc=$? $(grep -E '^(cublas|plan)' $res/$name.log | awk '{printf "%s %.1f  ", $2, $6 * 1000}')"
    pack
  done
done
log done
