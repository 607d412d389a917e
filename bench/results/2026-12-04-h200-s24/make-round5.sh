#!/usr/bin/env bash
# Session 24, the artifacts of GPU call 5 (the merged tree), compiled here
# into build-s24d (git-ignored; carried):
#   rtn/   bench/quantize-at-load/make-artifacts.sh (quantize-formats.qfa;
#          llama3-8b int4-g128, 2:4+int4, unquantized 2:4 with their
#          quantize artifacts; GPTQ int4-g128; fp16 calib 256)
#   gptq/  bench/make-gptq-artifacts.sh's test artifacts
#   tiny/  the synthetic tiny Llama's artifacts (int4-g128 and int8 per
#          channel: GPTQ, decode; fp16 calib)
#   ao/    bench/act-order/make-artifacts.sh, Qwen2.5-7B's downs part
#          (down_proj reading a silu_mul) and PermGuardsGpuTest's artifacts
set -euo pipefail
B=build; O=build-s24d
rm -rf $O; mkdir -p $O/tiny $O/ao
git rev-parse --short HEAD > $O/COMMIT
bench/quantize-at-load/make-artifacts.sh $B $PWD/$O/rtn > $O/rtn.log 2>&1
export PYTHONPATH=python-frontend QFUSE_BUILD_DIR=$B
rm -rf artifacts/gptq; bench/make-gptq-artifacts.sh > $O/gptq.log 2>&1
mkdir -p $O/gptq; cp artifacts/gptq/test-*.qfa artifacts/gptq/*.json $O/gptq/
$B/bin/qfuse-synthetic-model --config-preset tiny-llama --out /tmp/tiny-cfg --seed 1 > /dev/null
cfg=/tmp/tiny-cfg/config.json
python3 -m qfuse compile --config $cfg --encoding fp16 --batch-sizes 1,128 --chip sm_90 -o $O/tiny/qfuse-fp16-calib.qfa
for e in int4-g128 int8; do
  python3 -m qfuse compile-gptq --config $cfg --encoding $e -o $O/tiny/qfuse-gptq-$e.qfa
  python3 -m qfuse compile --config $cfg --encoding $e --batch-sizes 1,8 -o $O/tiny/qfuse-$e.qfa
done
python3 -m qfuse emit --config $cfg --encoding fp16 --batch dynamic --max-seq 256 -o /tmp/tiny.mlir
$B/bin/qfuse-compile /tmp/tiny.mlir --batch-sizes=1,8 -o $O/tiny/tiny-llama-fp16.qfa 2>> $O/compile.log
MODELS=qwen2.5-7b:3584:512:18944 PARTS=downs bench/act-order/make-artifacts.sh $B /tmp/ba24 > $O/ao.log 2>&1
mkdir -p $O/ao/artifacts $O/ao/tests; cp /tmp/ba24/artifacts/*.qfa $O/ao/artifacts/; cp /tmp/ba24/runs.txt $O/ao/; cp /tmp/ba24/src/artifacts/act-order/*.qfa $O/ao/tests/
tar cJf /tmp/arts.tar.xz -C $O COMMIT rtn gptq tiny ao
rm -rf $O/rtn $O/gptq $O/tiny $O/ao
mv /tmp/arts.tar.xz $O/; cp build-s23e/vendor.tgz $O/
du -sh $O/*
