#!/usr/bin/env bash
# Session 24, the artifacts of GPU call 2, compiled here into build-s24b
# (git-ignored; carried): issue 19's static-group fits on the device and
# act-order's moves as copy batches.
#   rtn/   bench/quantize-at-load/make-artifacts.sh (quantize-formats.qfa,
#          llama3-8b int4-g128 decode + quantize, GPTQ, fp16 calib 256)
#   gptq/  bench/make-gptq-artifacts.sh's test artifacts
#   tiny/  the synthetic tiny Llama's artifacts (device vs host checks)
set -euo pipefail
B=build; O=build-s24b
rm -rf $O; mkdir -p $O/tiny
git rev-parse --short HEAD > $O/COMMIT
bench/quantize-at-load/make-artifacts.sh $B $PWD/$O/rtn > $O/rtn.log 2>&1
export PYTHONPATH=python-frontend QFUSE_BUILD_DIR=$B
rm -rf artifacts/gptq; QFUSE_BUILD_DIR=$B bench/make-gptq-artifacts.sh > $O/gptq.log 2>&1
mkdir -p $O/gptq; cp artifacts/gptq/test-*.qfa artifacts/gptq/*.json $O/gptq/
$B/bin/qfuse-synthetic-model --config-preset tiny-llama --out /tmp/tiny-cfg --seed 1 > /dev/null
cfg=/tmp/tiny-cfg/config.json
python3 -m qfuse compile --config $cfg --encoding fp16 --batch-sizes 1,128 --chip sm_90 -o $O/tiny/qfuse-fp16-calib.qfa
python3 -m qfuse compile-gptq --config $cfg --encoding int4-g128 -o $O/tiny/qfuse-gptq-int4-g128.qfa
python3 -m qfuse compile --config $cfg --encoding int4-g128 --batch-sizes 1,8 -o $O/tiny/qfuse-int4-g128.qfa
python3 -m qfuse emit --config $cfg --encoding fp16 --batch dynamic --max-seq 256 -o /tmp/tiny.mlir
$B/bin/qfuse-compile /tmp/tiny.mlir --batch-sizes=1,8 -o $O/tiny/tiny-llama-fp16.qfa 2>> $O/compile.log
tar cJf /tmp/arts.tar.xz -C $O COMMIT rtn gptq tiny
rm -rf $O/rtn $O/gptq $O/tiny
mv /tmp/arts.tar.xz $O/; cp build-s23e/vendor.tgz $O/
du -sh $O/*
