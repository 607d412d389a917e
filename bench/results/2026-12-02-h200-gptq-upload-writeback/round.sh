#!/usr/bin/env bash
# Round 3 on the H200: the runtime of main (pinned uploads, early writeback)
# - GPU unit tests, the GPTQ pipeline (QUICK) against round 2's codes, the
# quantize-at-load timing, and a 64 x 2048 calibration (seq 2048).
set -u
out=${OUT:-/tmp/out}; mkdir -p $out/r3
log() { echo "[$(date +%T)] $*"; }
R=$PWD/build-r3; A=$PWD/build-r2/art; b=/tmp/qb
cd $R/src
log "build"
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/r3/cfg.log 2>&1 || { tail $out/r3/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-synthetic-model qfuse-runtime-tests qfuse-runtime-gpu-tests qfuse-gptq-layer qfuse-run qfuse-model-check > $out/r3/build.log 2>&1 || { tail -30 $out/r3/build.log; exit 1; }
log "GPU unit tests"
QFUSE_GPTQ_ARTIFACTS=$A/test timeout 150 $b/unittests/Runtime/qfuse-runtime-gpu-tests > $out/r3/gpu-tests.log 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $out/r3/gpu-tests.log | head -20
log "pipeline (QUICK), codes against round 2"
OUT=$out QUICK=1 T1=90 T2=100 timeout 300 bash scripts/gptq-pipeline-round.sh . $A $R/base
m=/tmp/l8b
if [ -d $m ]; then
  log "quantize-at-load: qfuse-run --model, int4-g128 (round to nearest on the host)"
  cp $A/llama3-8b/qfuse-int4-g128.qfa $m/
  timeout 90 /usr/bin/time -v $b/bin/qfuse-run --model $m --encoding int4-g128 --prompt-ids 1,2,3 --max-new-tokens 1 \
    --json $out/r3/load-int4.json > $out/r3/load-int4.log 2>&1; echo "rc=$?" >> $out/r3/load-int4.log
  grep -E "bound in|Elapsed|rc=" $out/r3/load-int4.log
  log "fp16 bind alone: qfuse-run --model, fp16 artifact"
  timeout 60 $b/bin/qfuse-run --model $m --artifact $A/llama3-8b/qfuse-fp16-calib-512.qfa --prompt-ids 1,2,3 --max-new-tokens 1 > $out/r3/load-fp16.log 2>&1
  grep -E "bound in" $out/r3/load-fp16.log
  log "64 x 2048 tokens"
  timeout 150 /usr/bin/time -v $b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:64 --seq-len 2048 \
    --out /tmp/q-64x2048 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-512.qfa --json $out/r3/64x2048.json \
    > $out/r3/64x2048.log 2>&1; echo "rc=$?" >> $out/r3/64x2048.log
  grep -E "layer (1|2|32)/|calibration:|qfuse-quantize:|Elapsed|rc=" $out/r3/64x2048.log
fi
log done
tar -C $out -czf $out/r3.tgz r3
