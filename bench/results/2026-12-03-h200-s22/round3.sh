#!/usr/bin/env bash
# Session 22, GPU call 3 (build-s22c carried: vendor.tgz, gw.tgz = gw/ gz/ gp/
# made by bench/gated-wgmma/make-artifacts.py at d127e2a+: gw = training
# gate/up shapes 14336x4096, 5632x2048, 20480x5120 at batches 32-256; gz =
# six zoo gate/up shapes at 32-256 (test set: not used to pick the rule);
# gp = plain training shapes at 64 and 96 with the wgmma split/cluster
# tilings). Each (shape, batch) timed in one qfuse-bench process, every
# candidate against cuBLAS fp16; every wgmma tiling of 5632x2048 at batch
# 96 and 20480x5120 at batch 256 checked against the C++ reference.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r3.tgz" -C /tmp r3; }
r=build-s22c; b=/tmp/qb
log build
tar xzf $r/vendor.tgz; tar xzf $r/gw.tgz -C /tmp
[ -x $b/bin/qfuse-bench ] || { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
log checks
for a in /tmp/gw/artifacts/gu5632x2048-b96-W*.qfa /tmp/gw/artifacts/gu20480x5120-b256-W*.qfa; do
  m=${a##*-b}; m=${m%%-*}
  ( cd /tmp/gw && timeout 60 $b/bin/qfuse-bench --artifact $a --batch $m --check-only > $res/check-$(basename $a .qfa).log 2>&1 )
  echo "check $(basename $a) rc=$? $(grep -E 'rel err' $res/check-$(basename $a .qfa).log | awk '{print $(NF-1), $NF}' | tr '\n' ' ')"
done; pack
for d in gw gz gp; do
  log "timing $d"
  while read -r name args; do
    ( cd /tmp/$d && timeout 60 $b/bin/qfuse-bench $args --json $res/$name.json > $res/$name.log 2>&1 )
    echo "$name rc=$?"
  done < /tmp/$d/runs.txt
  pack
done
log done
