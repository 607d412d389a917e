#!/usr/bin/env bash
# Session 20, GPU call 2: issue 19's pre-layer branch (gptq-prelayer,
# carried as build-round/gptq-src.tgz: git archive of the branch's runtime,
# format, unittests, cmake and bench/gptq-overlap) over the tree, then
# bench/gptq-overlap/run.sh with build-rtn, build-vendor and the tiny
# Llama's fp16 artifact.
set -uo pipefail
tar xzf build-round/rtn.tgz; tar xzf build-round/vendor.tgz; tar xzf build-round/gptq-src.tgz
mkdir -p artifacts/models && cp build-round/tiny-llama-fp16.qfa artifacts/models/
echo "gptq-prelayer $(cat build-round/GPTQ_COMMIT 2>/dev/null)" > COMMIT
bash bench/gptq-overlap/run.sh 2>&1 | tail -60
