#!/usr/bin/env bash
# Round 1 artifacts (GPTQ pipeline round + profile), compiled here.
set -euo pipefail
cd /work/main
export PYTHONPATH=python-frontend QFUSE_BUILD_DIR=build
A=build-r1/art; cfg=examples/configs/llama3-8b.json
mkdir -p $A/llama3-8b $A/tiny-llama $A/test
python3 -m qfuse compile-gptq --config $cfg --encoding int4-g128 --chip sm_90 -o $A/llama3-8b/qfuse-gptq-int4-g128.qfa
python3 -m qfuse compile --config $cfg --encoding fp16 --batch-sizes 1,512 --chip sm_90 -o $A/llama3-8b/qfuse-fp16-calib-512.qfa
python3 -m qfuse compile --config $cfg --encoding fp16 --batch-sizes 1,256 --chip sm_90 -o $A/llama3-8b/qfuse-fp16-calib-256.qfa
python3 -m qfuse compile --config $cfg --encoding int4-g128 --batch-sizes 1,8 --chip sm_90 -o $A/llama3-8b/qfuse-int4-g128.qfa
tmp=$(mktemp -d)
build/bin/qfuse-synthetic-model --config-preset tiny-llama --out $tmp/model --seed 1 > /dev/null
cp $tmp/model/config.json $A/tiny-llama/config.json
python3 -m qfuse emit --config $A/tiny-llama/config.json --encoding fp16 --batch dynamic --max-seq 256 -o $tmp/fp16.mlir
build/bin/qfuse-compile $tmp/fp16.mlir --batch-sizes=1,128 -o $A/tiny-llama/qfuse-fp16-calib.qfa > /dev/null
python3 -m qfuse emit --config $A/tiny-llama/config.json --encoding int4-g128 --batch dynamic --max-seq 256 -o $tmp/int4.mlir
build/bin/qfuse-compile $tmp/int4.mlir --batch-sizes=1,8 -o $A/tiny-llama/qfuse-int4-g128.qfa > /dev/null
python3 -m qfuse compile-gptq --config $A/tiny-llama/config.json --encoding int4-g128 -o $A/tiny-llama/qfuse-gptq-int4-g128.qfa
cat > $tmp/test-even.json <<JSON
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 384, "intermediate_size": 640, "num_attention_heads": 6, "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 1, "vocab_size": 512, "max_position_embeddings": 256, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false}
JSON
python3 -m qfuse compile-gptq --config $tmp/test-even.json --encoding int4-g128 -o $A/test/test-int4-g128.qfa
python3 -m qfuse compile-gptq --config $tmp/test-even.json --encoding nvfp4 -o $A/test/test-nvfp4.qfa
rm -rf $tmp
cp -r artifacts/shapes artifacts/steps artifacts/runs.txt build-r1/
du -sh build-r1/*
