#!/usr/bin/env bash
# Session 23, GPU call 2 (build-s23b carried: vendor.tgz, steps.tar.xz,
# ab.tar.xz, zoo/ = the zoo runs call 1 did not reach).
# steps: Llama-3-8B int4-g128 step as a model wires it (build-s23b/make-steps.sh:
#   decode_step_ir.py --full-step --as-model, --chip=sm_90a, no tuning db),
#   default fusions at 1-256 and without gated-mlp at 64-256.
# ab: bench/gated-wgmma/make-fusion-ab.py build-s23b/ab <7 gate/up shapes> 64,...,512:
#   gate/up + silu_mul compiled gated / grouped / separate, timed in one
#   process each (placeholder codes) against cuBLAS fp16 [M, 2N, K]; one
#   shape checked with real RTN weights.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r2; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r2.tgz" -C /tmp r2; }
r=build-s23b; b=/tmp/qb
log build
tar xzf $r/vendor.tgz; tar xJf $r/steps.tar.xz -C $r; mkdir -p /tmp/ab; tar xJf $r/ab.tar.xz -C /tmp/ab
tar xJf $r/zoo/artifacts.tar.xz -C $r/zoo
[ -x $b/bin/qfuse-bench ] || { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
log steps
for n in l8b-model-b1 l8b-model-b16 l8b-model-b64 l8b-nogate-b64 l8b-model-b128 l8b-nogate-b128 l8b-model-b256 l8b-nogate-b256; do
  m=${n##*-b}
  timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m --artifact $r/steps/$n.qfa --placeholder-weights --json $res/$n.json > $res/$n.log 2>&1
  echo "$n rc=$? $(grep -E '^(cublas|plan)' $res/$n.log | awk '{print $(NF-4)}' | tr '\n' ' ')"
done
pack
log ab-check
( cd /tmp/ab && timeout 120 $b/bin/qfuse-bench --artifact artifacts/mlp11008x4096-b128-gated.qfa --artifact artifacts/mlp11008x4096-b128-grouped.qfa --artifact artifacts/mlp11008x4096-b128-separate.qfa --batch 128 --check-only > $res/ab-check.log 2>&1 ); echo "check rc=$?"; grep -iE "rel|pass|fail" $res/ab-check.log | tail -8
log ab
while read -r name args; do
  ( cd /tmp/ab && timeout 60 $b/bin/qfuse-bench $args --placeholder-weights --json $res/$name.json > $res/$name.log 2>&1 )
  echo "$name rc=$? $(grep -E '^(cublas|plan)' $res/$name.log | awk '{print $(NF-4)}' | tr '\n' ' ')"
done < /tmp/ab/runs.txt
pack
log zoo-rest
ZOO_WORK=/tmp/zooround QFUSE_BENCH=$b/bin/qfuse-bench bash $r/zoo/run-zoo.sh $r/zoo 200 > $res/zoo-run.log 2>&1
tail -3 $res/zoo-run.log
cp $out/zoo.tgz $res/zoo-rest.tgz 2>/dev/null; rm -f $out/zoo.tgz
pack
log done
