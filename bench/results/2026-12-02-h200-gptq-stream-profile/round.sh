#!/usr/bin/env bash
# Round 1 on the H200: the GPTQ pipeline (QUICK), a profile of the fp16
# calibration plan at batch 512, the Llama-3-8B step timings (issue 17 A/B),
# and 128x512 with --hessian-rows 4096.
set -u
root=$PWD; out=${OUT:-/tmp/out}; mkdir -p $out/extra
log() { echo "[$(date +%T)] $*"; }
b=/tmp/qb; A=build-r1/art
log "configure+build"
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/extra/cfg.log 2>&1 || { tail $out/extra/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-synthetic-model qfuse-runtime-tests qfuse-runtime-gpu-tests qfuse-gptq-layer qfuse-run qfuse-model-check qfuse-bench > $out/extra/build.log 2>&1 || { tail -30 $out/extra/build.log; exit 1; }
log "pipeline round"
OUT=$out QUICK=1 T1=90 T2=100 timeout 330 bash scripts/gptq-pipeline-round.sh . $A bench/results/2026-12-02-h200-gptq-device-rebind/quick2
m=/tmp/l8b
if [ -d $m ]; then
  log "profile: fp16 calibration plan at batch 512"
  ids=$(python3 -c "print(','.join(str(7 + 13 * i % 120000) for i in range(512)))")
  timeout 60 $b/bin/qfuse-run --model $m --artifact $A/llama3-8b/qfuse-fp16-calib-512.qfa \
    --prompt-ids $ids --max-new-tokens 1 --profile-batch 512 --json $out/extra/profile-512.json > $out/extra/profile-512.log 2>&1
  grep -E "by part|bound in|error" $out/extra/profile-512.log
fi
log "issue 17: Llama-3-8B step timings (tuning database, sm_90)"
while read -r name args; do
  case $name in *step*|*shapes*) ;; *) continue;; esac
  args=${args//artifacts\//build-r1/}
  timeout 40 $b/bin/qfuse-bench $args --json $out/extra/$name.json > $out/extra/$name.log 2>&1 || echo "FAILED $name"
  printf '%-36s ' $name; grep -E "median|ratio|speedup|PASS|FAIL" $out/extra/$name.log | tail -2 | tr '\n' ' '; echo
done < build-r1/runs.txt
if [ -d $m ]; then
  log "128x512 --hessian-rows 4096"
  timeout 100 /usr/bin/time -v $b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:128 --seq-len 512 \
    --out /tmp/q-h4096 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-512.qfa --hessian-rows 4096 \
    --json $out/extra/128x512-h4096.json > $out/extra/128x512-h4096.log 2>&1; echo "rc=$?" >> $out/extra/128x512-h4096.log
  grep -E "qfuse-quantize:|Elapsed|rc=" $out/extra/128x512-h4096.log
  [ -f $out/pipeline/128x512.json ] && python3 scripts/gptq-compare-losses.py $out/pipeline/128x512.json $out/extra/128x512-h4096.json | tail -5
fi
log done
tar -C $out -czf $out/extra.tgz extra
