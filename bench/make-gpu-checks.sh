#!/usr/bin/env bash
# Compiles what the GPU round's `hf` and `sanitize` parts run (here, where the
# compiler is) into OUT (default .devcarry/gpu-checks, git-ignored; carry it
# to the GPU machine whole):
#
# - OUT/hf/<model>-{fp16,int4-g128}.qfa: the whole models of
#   bench/hf-check/configs/*.json, plans for 1, 8 and 32 rows, 128 cache
#   positions; bench/hf-check/hf_check.py builds the same models with
#   transformers there and compares the logits (docs/decode-model.md, 6).
# - OUT/sanitize/*.qfa: one small plan of every kernel family for
#   bench/sanitize/run-sanitize.py (bench/sanitize/README.md).
#
#   bench/make-gpu-checks.sh [build-dir, default build] [OUT]
set -euo pipefail
build="${1:-build}"
out="${2:-.devcarry/gpu-checks}"
bin="$build/bin"
compile="$bin/qfuse-compile --tuning-db=bench/tuning-db.json"
export PYTHONPATH=python-frontend QFUSE_BUILD_DIR="$build"
emit="python3 -m qfuse emit --batch dynamic"
rm -rf "$out"
mkdir -p "$out/hf" "$out/sanitize"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git rev-parse --short HEAD > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
: > "$out/COMPILE"
run() { echo "$*" >> "$out/COMPILE"; "$@"; }

# transformers numerics: every config, fp16 (cuBLAS steps) and int4-g128.
# (hf_check.py's BATCH_SIZES and MAX_SEQ; it checks the artifacts' plans)
hf_batches=1,8,32
hf_seq=128
for config in bench/hf-check/configs/*.json; do
  name="$(basename "$config" .json)"
  for enc in fp16 int4-g128; do
    run $emit --config "$config" --encoding "$enc" --max-seq "$hf_seq" -o "$tmp/$name-$enc.mlir"
    run $compile "$tmp/$name-$enc.mlir" --batch-sizes="$hf_batches" -o "$out/hf/$name-$enc.qfa"
  done
done

# Sanitizers: the matvec, mma.sync, the fallback, act_order's permute, wgmma
# (sm_90a), the GPTQ block and the decode ops of a tiny Llama (unfused, and
# fused with the device sampler).
s=bench/sanitize
run $compile $s/matmul.mlir --batch-sizes=1,3 -o "$out/sanitize/matvec.qfa"
run $compile $s/matmul.mlir --batch-sizes=16 -o "$out/sanitize/mma.qfa"
run $compile $s/matmul.mlir --batch-sizes=16 --dequant-gemm-min-batch=16 \
  -o "$out/sanitize/fallback.qfa"
run $compile $s/act-order.mlir --batch-sizes=1,16 -o "$out/sanitize/act-order.qfa"
run $bin/qfuse-compile $s/wgmma.mlir --chip=sm_90a -o "$out/sanitize/wgmma.qfa"
run $bin/qfuse-compile $s/gptq-blocks.mlir -o "$out/sanitize/gptq-blocks.qfa"
run $emit --config $s/tiny-llama.json --encoding int4-g128 --max-seq 64 -o "$tmp/tiny.mlir"
run $compile --fuse=none "$tmp/tiny.mlir" --batch-sizes=1,16 \
  -o "$out/sanitize/model-unfused.qfa"
run $emit --config $s/tiny-llama.json --encoding int4-g128 --max-seq 64 --sampling \
  -o "$tmp/tiny-sampling.mlir"
run $compile "$tmp/tiny-sampling.mlir" --batch-sizes=1,16 -o "$out/sanitize/model-sampling.qfa"

# Each family's kernels where the plan must have them (a compiler change that
# moves a shape to another kernel must show here, not as a silently
# different sanitizer table).
python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]
want = {"matvec": ["qf_matvec_"], "mma": ["qf_mma_"], "fallback": ["qf_dequant_", "gemm"],
        "act-order": ["qf_permute_", "qf_mma_", "qf_matvec_"], "wgmma": ["qf_wgmma_"],
        "gptq-blocks": ["qf_gptq_block_"],
        "model-unfused": ["qf_embedding_", "qf_rms_norm_", "qf_rotary_", "qf_attention_",
                          "qf_kv_cache_write_", "qf_add_", "qf_silu_mul_", "qf_argmax_",
                          "qf_matvec_", "qf_mma_"],
        "model-sampling": ["qf_rotary_attention_", "qf_sample_", "qf_embedding_"]}
bad = []
for name, prefixes in want.items():
    a = json.load(open(os.path.join(out, "sanitize", name + ".qfa")))
    steps = [s.get("launch") or ("gemm" if "gemm" in s else "?")
             for p in a["plans"] for s in p["steps"]]
    for prefix in prefixes:
        if not any(s.startswith(prefix) for s in steps):
            bad.append(f"{name}.qfa has no {prefix}* step ({sorted(set(steps))})")
for line in bad:
    print("make-gpu-checks: " + line, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
echo "make-gpu-checks: $(ls "$out"/hf | wc -l) hf artifacts, $(ls "$out"/sanitize | wc -l) sanitizer artifacts, $(du -sh "$out" | cut -f1) in $out"
