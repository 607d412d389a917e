#!/usr/bin/env bash
# Round 2 artifacts: the split rotary attention (this worktree's compiler)
# against the one-launch form (main's compiler), and the GPTQ round's.
set -euo pipefail
cd /work/wt-attn
export PYTHONPATH=python-frontend
new=build/bin/qfuse-compile; old=/work/main/build/bin/qfuse-compile
A=build-r2/art; cfg=examples/configs/llama3-8b.json
mkdir -p $A/llama3-8b $A/tiny-llama $A/test $A/prof
cp /work/main/build-r1/art/llama3-8b/qfuse-gptq-int4-g128.qfa /work/main/build-r1/art/llama3-8b/qfuse-int4-g128.qfa $A/llama3-8b/
cp /work/main/build-r1/art/test/* $A/test/
cp /work/main/build-r1/art/tiny-llama/{config.json,qfuse-gptq-int4-g128.qfa} $A/tiny-llama/
tmp=$(mktemp -d)
python3 -m qfuse emit --config $cfg --encoding fp16 --batch dynamic -o $tmp/l8.mlir
for n in 512 256; do $new $tmp/l8.mlir --batch-sizes=1,$n --chip=sm_90 -o $A/llama3-8b/qfuse-fp16-calib-$n.qfa; done
for n in 32 64; do
  $new $tmp/l8.mlir --batch-sizes=1,$n --chip=sm_90 -o $A/prof/new-$n.qfa
  $old $tmp/l8.mlir --batch-sizes=1,$n --chip=sm_90 -o $A/prof/old-$n.qfa
done
cp /work/main/build-r1/art/llama3-8b/qfuse-fp16-calib-512.qfa $A/prof/old-512.qfa
python3 -m qfuse emit --config $A/tiny-llama/config.json --encoding fp16 --batch dynamic --max-seq 256 -o $tmp/tf.mlir
$new $tmp/tf.mlir --batch-sizes=1,128 -o $A/tiny-llama/qfuse-fp16-calib.qfa
$new $tmp/tf.mlir --batch-sizes=1,32,128 -o $A/tiny-llama/check-fp16.qfa
python3 -m qfuse emit --config $A/tiny-llama/config.json --encoding int4-g128 --batch dynamic --max-seq 256 -o $tmp/ti.mlir
$new $tmp/ti.mlir --batch-sizes=1,8 -o $A/tiny-llama/qfuse-int4-g128.qfa
$new $tmp/ti.mlir --batch-sizes=1,32,128 -o $A/tiny-llama/check-int4.qfa
rm -rf $tmp
for f in $A/prof/*.qfa $A/tiny-llama/check-*.qfa $A/llama3-8b/qfuse-fp16-calib-512.qfa; do
  printf '%s: ' $f; python3 -c "import json,sys; print(sorted({k['name'] for k in json.load(open('$f'))['kernels'] if 'attention' in k['name'] or 'cache_write' in k['name']}))"
done
du -sh $A
