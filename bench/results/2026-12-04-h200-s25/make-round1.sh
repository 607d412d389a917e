#!/usr/bin/env bash
# Session 25, the artifacts of GPU call 1, compiled here into build-s25a
# (git-ignored; carried with vendor.tgz = build-vendor/ from
# runtime/tools/vendor-headers.sh):
#   rtn/   bench/quantize-at-load/make-artifacts.sh (quantize-formats.qfa,
#          which now holds the qf_widen_* kernels; llama3-8b int4-g128 with
#          its quantize artifact; GPTQ int4-g128; fp16 calib 256)
#   gptq/  bench/make-gptq-artifacts.sh's test artifacts
#   tiny/  the synthetic tiny Llama's artifacts (int4-g128, int8 per
#          channel, fp8 per channel: GPTQ, decode; fp16 calib)
#   xover/ ONLY='^q7b-' bench/crossover/make-artifacts.sh: Qwen2.5-7B's
#          q/o (12.8M), k/v, down (training shapes) with the matvec and the
#          tensor-core kernel at batches 2-8
set -euo pipefail
B=build; O=build-s25a
rm -rf $O; mkdir -p $O/tiny
git rev-parse --short HEAD > $O/COMMIT
bench/quantize-at-load/make-artifacts.sh $B $PWD/$O/rtn > $O/rtn.log 2>&1
rm -f $O/rtn/llama3-8b/qfuse-sp-*
export PYTHONPATH=python-frontend QFUSE_BUILD_DIR=$B
rm -rf artifacts/gptq; bench/make-gptq-artifacts.sh > $O/gptq.log 2>&1
mkdir -p $O/gptq; cp artifacts/gptq/test-*.qfa artifacts/gptq/*.json $O/gptq/
$B/bin/qfuse-synthetic-model --config-preset tiny-llama --out /tmp/tiny-cfg --seed 1 > /dev/null
cfg=/tmp/tiny-cfg/config.json
python3 -m qfuse compile --config $cfg --encoding fp16 --batch-sizes 1,128 --chip sm_90 -o $O/tiny/qfuse-fp16-calib.qfa
for e in int4-g128 int8 fp8; do
  python3 -m qfuse compile-gptq --config $cfg --encoding $e -o $O/tiny/qfuse-gptq-$e.qfa
  python3 -m qfuse compile --config $cfg --encoding $e --batch-sizes 1,8 -o $O/tiny/qfuse-$e.qfa
done
python3 -m qfuse emit --config $cfg --encoding fp16 --batch dynamic --max-seq 256 -o /tmp/tiny.mlir
$B/bin/qfuse-compile /tmp/tiny.mlir --batch-sizes=1,8 -o $O/tiny/tiny-llama-fp16.qfa 2>> $O/compile.log
ONLY='^q7b-' bench/crossover/make-artifacts.sh $B $O/xover > $O/xover.log 2>&1
tar cJf /tmp/arts.tar.xz -C $O COMMIT rtn gptq tiny
rm -rf $O/rtn $O/gptq $O/tiny
mv /tmp/arts.tar.xz $O/; tar czf $O/vendor.tgz build-vendor
du -sh $O/*
