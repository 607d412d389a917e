#!/usr/bin/env bash
# Round 1's qfuse-quantize runs alone (the machine still warm, /tmp/l8b and
# /tmp/qb from round.sh there): SKIP to the 8 x 256 runs.
set -u
out=${OUT:-/tmp/out}; res=/tmp/r1q; rm -rf $res; mkdir -p $res $out
R=$PWD/build-c17; A=$R/art; b=/tmp/qb; m=/tmp/l8b
pack() { tar -C /tmp -czf $out/r1q.tgz r1q; }
cp $A/llama3-8b/qfuse-gptq-int4-g128.qfa $A/llama3-8b/qfuse-int4-g128.qfa $m/
cat $m/*.safetensors > /dev/null
for i in 1 2 3; do
  echo "[$(date +%T)] 8x256 run $i"
  timeout 90 /usr/bin/time -v -o $res/8x256-$i.time $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:8 --seq-len 256 --out /tmp/q-$i --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa \
    --json $res/8x256-$i.json > $res/8x256-$i.log 2>&1; echo "rc=$?" >> $res/8x256-$i.log
  grep -E "Elapsed|Exit" $res/8x256-$i.time; grep -E "qfuse-quantize:|rc=" $res/8x256-$i.log | tail -3
  ls -la /tmp/q-$i > $res/8x256-$i.ls 2>&1; sleep 3; rm -rf /tmp/q-$i; pack
done
