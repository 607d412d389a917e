#!/usr/bin/env bash
# Session 23, GPU call 4 (build-s23d carried: vendor.tgz, steps.tar.xz): the
# Llama-3-8B step as a model wires it (--full-step --as-model, sm_90a) at
# batches 1, 16, 64, compiled three ways -- plain (default), --grid-dependency
# (launch_dependents and wait at each kernel's start) and --grid-dependency
# --grid-dependency-trigger=false (wait only) -- timed in one process per
# batch against cuBLAS fp16 (placeholder codes); and the same PDL artifacts
# with QFUSE_PDL=0.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r4; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r4.tgz" -C /tmp r4; }
r=build-s23d; b=/tmp/qb
tar xzf $r/vendor.tgz; tar xJf $r/steps.tar.xz -C $r
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
for m in 1 16 64; do
  s=$r/steps
  timeout 90 $b/bin/qfuse-bench --model llama3-8b --batch $m --artifact $s/plain-b$m.qfa --artifact $s/trig-b$m.qfa --artifact $s/wait-b$m.qfa \
    --placeholder-weights --json $res/b$m.json > $res/b$m.log 2>&1
  echo "b$m rc=$? $(grep -E '^(cublas|plan)' $res/b$m.log | awk '{print $2, $(NF-4)}' | tr '\n' ' ')"
  QFUSE_PDL=0 timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m --artifact $s/wait-b$m.qfa \
    --placeholder-weights --json $res/b$m-off.json > $res/b$m-off.log 2>&1
  echo "b$m PDL off rc=$? $(grep -E '^(cublas|plan)' $res/b$m-off.log | awk '{print $2, $(NF-4)}' | tr '\n' ' ')"
  pack
done
log done
