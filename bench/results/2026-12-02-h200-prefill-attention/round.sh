#!/usr/bin/env bash
# Round 2 on the H200: the split rotary attention (batch >= 32) checked
# against the reference decoder on the tiny Llama, the GPTQ pipeline with
# it, and plan profiles of the one-launch (old) and split (new) forms.
set -u
out=${OUT:-/tmp/out}; mkdir -p $out/r2
log() { echo "[$(date +%T)] $*"; }
R=$PWD/build-r2; A=$R/art; b=/tmp/qb
cd $R/src
log "tiny-llama: split attention against the reference decoder"
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $out/r2/cfg.log 2>&1 || { tail $out/r2/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-synthetic-model qfuse-model-check qfuse-run qfuse-quantize > $out/r2/build0.log 2>&1 || { tail -30 $out/r2/build0.log; exit 1; }
$b/bin/qfuse-synthetic-model --config-preset tiny-llama --out /tmp/tinym --seed 1 > /dev/null
ids=$(python3 -c "print(','.join(str(3 + 7 * i % 1000) for i in range(150)))")
for f in fp16 int4; do
  $b/bin/qfuse-model-check --model /tmp/tinym --artifact $A/tiny-llama/check-$f.qfa --prompt-ids $ids --steps 8 \
    --json $out/r2/model-check-$f.json > $out/r2/model-check-$f.log 2>&1 && echo "model-check $f (plans 1,32,128; 150-token prompt): ok" \
    || { echo "model-check $f: FAILED"; tail -8 $out/r2/model-check-$f.log; }
done
log "pipeline round (QUICK)"
OUT=$out QUICK=1 T1=90 T2=100 timeout 330 bash scripts/gptq-pipeline-round.sh . $A $R/base
m=/tmp/l8b
if [ -d $m ]; then
  for n in 32 64 512; do
    ids=$(python3 -c "print(','.join(str(7 + 13 * i % 120000) for i in range($n)))")
    for v in old new; do
      f=$A/prof/$v-$n.qfa; [ $v-$n = new-512 ] && f=$A/llama3-8b/qfuse-fp16-calib-512.qfa
      timeout 60 $b/bin/qfuse-run --model $m --artifact $f --prompt-ids $ids --max-new-tokens 1 --profile-batch $n \
        --json $out/r2/profile-$v-$n.json > $out/r2/profile-$v-$n.log 2>&1
      echo "$v $n: $(grep -E 'by part|error' $out/r2/profile-$v-$n.log)"
    done
  done
fi
log done
tar -C $out -czf $out/r2.tgz r2
