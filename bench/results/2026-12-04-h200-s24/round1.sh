#!/usr/bin/env bash
# Session 24, GPU call 1 (build-s24a carried: vendor.tgz, steps.tar.xz,
# tiny/): programmatic dependent launch's trigger placement and weight
# prefetch. The Llama-3-8B int4-g128 step as a model wires it
# (decode_step_ir.py --full-step --as-model, qfuse-compile --chip=sm_90a)
# at batches 1-128, compiled four ways: base (wait only, the default),
# late (--grid-dependency-trigger=late), latepf (late +
# --grid-dependency-prefetch), pf (prefetch, no trigger); timed in one
# process per batch against cuBLAS fp16 (placeholder codes). One layer's
# projections and lm_head (decode_step_ir.py without --full-step), latepf,
# checked against the C++ reference (--check-only, random RTN
# weights); the tiny Llama's int4 artifact (base / latepf) through
# qfuse-model-check with PDL on.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r1; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r1.tgz" -C /tmp r1; }
r=build-s24a; b=/tmp/qb; s=/tmp/steps; c=/tmp/checks
tar xzf $r/vendor.tgz; rm -rf $s $c; mkdir -p $s $c; tar xJf $r/steps.tar.xz -C $s; tar xJf $r/checks.tar.xz -C $c
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench qfuse-model-check qfuse-synthetic-model; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
log built
t=/tmp/tiny; rm -rf $t; mkdir -p $t
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out $t/m --seed 1 --dtype f16 > /dev/null
for v in base latepf; do
  timeout 60 $b/bin/qfuse-model-check --model $t/m --artifact $r/tiny/$v.qfa --prompt-ids 1,2,3 --steps 16 > $res/model-check-$v.log 2>&1 \
    && echo "model-check $v: ok" || { echo "model-check $v: FAILED"; tail -5 $res/model-check-$v.log; }
done
for m in 1 2 4 8 16 64 128; do
  timeout 100 $b/bin/qfuse-bench --artifact $c/latepf-b$m.qfa --check-only > $res/check-b$m.log 2>&1
  echo "check latepf b$m rc=$? $(grep -c -i fail $res/check-b$m.log) fail-lines"
done
pack
for m in 1 2 4 8 16 32 64 128; do
  timeout 90 $b/bin/qfuse-bench --model llama3-8b --batch $m --artifact $s/base-b$m.qfa --artifact $s/late-b$m.qfa \
    --artifact $s/latepf-b$m.qfa --artifact $s/pf-b$m.qfa --placeholder-weights --json $res/b$m.json > $res/b$m.log 2>&1
  echo "b$m rc=$? $(grep -E '^(cublas|plan)' $res/b$m.log | awk '{print $2, $(NF-4)}' | tr '\n' ' ')"
  pack
done
log done
