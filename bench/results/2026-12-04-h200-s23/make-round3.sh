#!/usr/bin/env bash
# Session 23, the artifacts of GPU call 3, compiled here into build-s23c
# (git-ignored; carried): issue 19's device paths (act-order prepare, bf16
# uploaded once, quantize-at-load's remaining encodings) and the
# programmatic dependent launch.
#   rtn/       bench/quantize-at-load/make-artifacts.sh (quantize-formats.qfa,
#              llama3-8b int4-g128 decode + quantize, GPTQ, fp16 calib 256)
#   calib/     llama3-8b fp16 calibration artifacts for 512 and 2048 tokens
#   gptq/      bench/make-gptq-artifacts.sh's test artifacts (GptqActOrderGpu)
#   tiny/      the synthetic tiny Llama's artifacts (device vs host checks)
#   sp/        llama3-8b 2:4+int4 at batches 1,8 (quantize-at-load, layouts)
#   steps/     Llama-3-8B int4-g128 step as a model wires it, sm_90a, b1/16/64/128
set -euo pipefail
B=build; O=build-s23c
rm -rf $O; mkdir -p $O/calib $O/tiny $O/sp $O/steps
git rev-parse --short HEAD > $O/COMMIT
bench/quantize-at-load/make-artifacts.sh $B $PWD/$O/rtn > $O/rtn.log 2>&1
export PYTHONPATH=python-frontend QFUSE_BUILD_DIR=$B
python3 -m qfuse emit --config examples/configs/llama3-8b.json --encoding fp16 --batch dynamic -o /tmp/l8.mlir
for s in 512 2048; do
  $B/bin/qfuse-compile /tmp/l8.mlir --batch-sizes=1,$s --chip=sm_90 -o $O/calib/qfuse-fp16-calib-$s.qfa 2>> $O/compile.log
done
rm -rf artifacts/gptq; QFUSE_BUILD_DIR=$B bench/make-gptq-artifacts.sh > $O/gptq.log 2>&1
mkdir -p $O/gptq; cp artifacts/gptq/test-*.qfa artifacts/gptq/*.json $O/gptq/
# The tiny Llama (qfuse-synthetic-model's preset, as the GPU round writes it).
$B/bin/qfuse-synthetic-model --config-preset tiny-llama --out /tmp/tiny-cfg --seed 1 > /dev/null
cfg=/tmp/tiny-cfg/config.json
python3 -m qfuse compile --config $cfg --encoding fp16 --batch-sizes 1,128 --chip sm_90 -o $O/tiny/qfuse-fp16-calib.qfa
python3 -m qfuse compile-gptq --config $cfg --encoding int4-g128 -o $O/tiny/qfuse-gptq-int4-g128.qfa
python3 -m qfuse compile --config $cfg --encoding int4-g128 --batch-sizes 1,8 -o $O/tiny/qfuse-int4-g128.qfa
python3 -m qfuse emit --config $cfg --encoding fp16 --batch dynamic --max-seq 256 -o /tmp/tiny.mlir
$B/bin/qfuse-compile /tmp/tiny.mlir --batch-sizes=1,8 -o $O/tiny/tiny-llama-fp16.qfa 2>> $O/compile.log
python3 -m qfuse compile --config examples/configs/llama3-8b.json --encoding 2:4+int4 --batch-sizes 1,8 -o $O/sp/qfuse-sp.qfa
for b in 1 16 64 128; do
  python3 bench/decode_step_ir.py --model llama3-8b --encoding int4-g128 --batch $b --full-step --as-model -o /tmp/s.mlir
  $B/bin/qfuse-compile --chip=sm_90a /tmp/s.mlir -o $O/steps/l8b-model-b$b.qfa 2>> $O/compile.log
done
# One xz archive travels (the carry limit), with the runtime's vendored deps.
tar cJf /tmp/arts.tar.xz -C $O COMMIT rtn calib gptq tiny sp steps
rm -rf $O/rtn $O/calib $O/gptq $O/tiny $O/sp $O/steps
mv /tmp/arts.tar.xz $O/; cp build-s23b/vendor.tgz $O/
du -sh $O/*
