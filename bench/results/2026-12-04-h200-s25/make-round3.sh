#!/usr/bin/env bash
# Session 25, the artifacts of GPU call 3, compiled here into build-s25c
# (git-ignored; carried with vendor.tgz):
#   rtn/   bench/quantize-at-load/make-artifacts.sh (quantize-formats.qfa
#          with the 3-, 5-, 6-, 7-bit gathers and codebooks; llama3-8b
#          int4-g128 with its quantize artifact; GPTQ int4-g128; fp16
#          calib 256)
#   gptq/  bench/make-gptq-artifacts.sh's test artifacts
#   calib/ llama3-8b's fp16 calibration artifact for 512 tokens
#   tiny/  the synthetic tiny Llama's artifacts: int4-g128 and a 3-bit
#          inline codebook (group 128), GPTQ and decode; fp16 calib
set -euo pipefail
B=build; O=build-s25c
rm -rf $O; mkdir -p $O/tiny $O/calib
git rev-parse --short HEAD > $O/COMMIT
bench/quantize-at-load/make-artifacts.sh $B $PWD/$O/rtn > $O/rtn.log 2>&1
rm -f $O/rtn/llama3-8b/qfuse-sp-*
export PYTHONPATH=python-frontend QFUSE_BUILD_DIR=$B
python3 -m qfuse emit --config examples/configs/llama3-8b.json --encoding fp16 --batch dynamic -o /tmp/l8.mlir
$B/bin/qfuse-compile /tmp/l8.mlir --batch-sizes=1,512 --chip=sm_90 -o $O/calib/qfuse-fp16-calib-512.qfa
rm -rf artifacts/gptq; bench/make-gptq-artifacts.sh > $O/gptq.log 2>&1
mkdir -p $O/gptq; cp artifacts/gptq/test-*.qfa artifacts/gptq/*.json $O/gptq/
$B/bin/qfuse-synthetic-model --config-preset tiny-llama --out /tmp/tiny-cfg --seed 1 > /dev/null
cfg=/tmp/tiny-cfg/config.json
python3 -m qfuse compile --config $cfg --encoding fp16 --batch-sizes 1,128 --chip sm_90 -o $O/tiny/qfuse-fp16-calib.qfa
cb3='#qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.6, -0.3, -0.1, 0.1, 0.3, 0.6, 1.0]> : tensor<8xf32>, group = 128, scale = f16>'
echo "$cb3" > $O/tiny/cb3.txt
python3 -m qfuse compile-gptq --config $cfg --encoding int4-g128 -o $O/tiny/qfuse-gptq-int4-g128.qfa
python3 -m qfuse compile --config $cfg --encoding int4-g128 --batch-sizes 1,8 -o $O/tiny/qfuse-int4-g128.qfa
python3 -m qfuse compile-gptq --config $cfg --encoding "$cb3" -o $O/tiny/gptq-cb3.qfa
python3 -m qfuse compile --config $cfg --encoding "$cb3" --batch-sizes 1,8 -o $O/tiny/cb3.qfa
tar cJf /tmp/arts.tar.xz -C $O COMMIT rtn calib gptq tiny
rm -rf $O/rtn $O/calib $O/gptq $O/tiny
mv /tmp/arts.tar.xz $O/; tar czf $O/vendor.tgz build-vendor
du -sh $O/*
