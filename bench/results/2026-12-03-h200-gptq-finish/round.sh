#!/usr/bin/env bash
# Round 4 (session 15): pinned code downloads + solver warm-up. GPU unit
# tests, the GPTQ pipeline (QUICK) against round 2's codes, 8x256 twice
# more (one with CUDA_MODULE_LOADING=EAGER, a profile of lazy loading).
set -u
out=${OUT:-/tmp/out}; mkdir -p $out/r4
log() { echo "[$(date +%T)] $*"; }
R=$PWD/build-r4; A=$PWD/build-r2/art; b=/tmp/qb
cd $R/src
log "build"
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/r4/cfg.log 2>&1 || { tail $out/r4/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-synthetic-model qfuse-runtime-tests qfuse-runtime-gpu-tests qfuse-gptq-layer qfuse-run qfuse-model-check > $out/r4/build.log 2>&1 || { tail -30 $out/r4/build.log; exit 1; }
log "GPU unit tests"
QFUSE_GPTQ_ARTIFACTS=$A/test timeout 150 $b/unittests/Runtime/qfuse-runtime-gpu-tests > $out/r4/gpu-tests.log 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $out/r4/gpu-tests.log | head -20
log "pipeline (QUICK), codes against round 2"
OUT=$out QUICK=1 T1=90 T2=100 timeout 300 bash scripts/gptq-pipeline-round.sh . $A $R/base
m=/tmp/l8b
if [ -d $m ]; then
  cp $A/llama3-8b/qfuse-gptq-int4-g128.qfa $A/llama3-8b/qfuse-int4-g128.qfa $m/
  for v in again eager; do
    log "8x256 $v"
    env $([ $v = eager ] && echo CUDA_MODULE_LOADING=EAGER) timeout 90 /usr/bin/time -v $b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:8 --seq-len 256 \
      --out /tmp/q-8x256 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa --json $out/r4/8x256-$v.json \
      > $out/r4/8x256-$v.log 2>&1; echo "rc=$?" >> $out/r4/8x256-$v.log
    grep -E "layer (1|2|32)/|bound in|qfuse-quantize:|Elapsed|rc=" $out/r4/8x256-$v.log
    rm -rf /tmp/q-8x256
  done
fi
log done
tar -C $out -czf $out/r4.tgz r4
