#!/usr/bin/env bash
# Compiles the tiled-attention round's artifacts into build-tiled/ (git
# ignores it) with this tree's compiler (new) and the one of the commit the
# branch starts from (old, OLD_COMPILE), and puts the runtime's sources and
# the vendored headers beside them, for run.sh on the GPU machine:
#
#   bench/prefill-attention/make-artifacts.sh [OUT]     # OUT: build-tiled
#
# art/prof/{old,new}-N.qfa    Llama-3-8B fp16, plans 1 and N (32, 64, 512)
# art/tiny-llama/             the synthetic tiny Llama (GQA 4/2, head_dim 64,
#                             Llama 3 rope): fp16 and int4-g128 with plans 1,
#                             32, 128, new and old
# art/l8attn/                 llama3-8b-attention.json (Llama-3-8B's attention:
#                             32 heads, 8 kv heads of 128, Llama 3 rope; small
#                             hidden, MLP and vocabulary, 2 layers): fp16 with
#                             plans 1, 64, 512, new and old
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$(mkdir -p "${1:-build-tiled}" && cd "${1:-build-tiled}" && pwd)"
new=${NEW_COMPILE:-$root/build/bin/qfuse-compile}
# The tiled kernel is the default: with --qf-tiled-attention=false the same
# compiler gives the CUDA-core kernel (OLD_COMPILE may name another build).
old=${OLD_COMPILE:-$new}
oldflags=--qf-tiled-attention=false
[ -n "${OLD_COMPILE:-}" ] && oldflags=
synthetic=${SYNTHETIC_MODEL:-$root/build/bin/qfuse-synthetic-model}
export PYTHONPATH=$root/python-frontend
A=$out/art
rm -rf "$A" "$out/src"
mkdir -p "$A/prof" "$A/tiny-llama" "$A/l8attn" "$out/src"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 -m qfuse emit --config examples/configs/llama3-8b.json --encoding fp16 \
  --batch dynamic -o "$tmp/l8.mlir"
for n in 32 64 512; do
  "$new" "$tmp/l8.mlir" --batch-sizes=1,$n --chip=sm_90 -o "$A/prof/new-$n.qfa"
  "$old" $oldflags "$tmp/l8.mlir" --batch-sizes=1,$n --chip=sm_90 -o "$A/prof/old-$n.qfa"
done

# The tiny Llama's config.json, exactly as run.sh writes the model there.
"$synthetic" --config-preset tiny-llama --out "$tmp/tiny" --seed 1 > /dev/null
cp "$tmp/tiny/config.json" "$A/tiny-llama/"
for enc in fp16 int4-g128; do
  python3 -m qfuse emit --config "$A/tiny-llama/config.json" --encoding $enc \
    --batch dynamic --max-seq 256 -o "$tmp/tiny-$enc.mlir"
  "$new" "$tmp/tiny-$enc.mlir" --batch-sizes=1,32,128 -o "$A/tiny-llama/new-$enc.qfa"
  "$old" $oldflags "$tmp/tiny-$enc.mlir" --batch-sizes=1,32,128 -o "$A/tiny-llama/old-$enc.qfa"
done

cfg=bench/prefill-attention/llama3-8b-attention.json
cp $cfg "$A/l8attn/config.json"
python3 -m qfuse emit --config $cfg --encoding fp16 --batch dynamic \
  --max-seq 2048 -o "$tmp/l8attn.mlir"
"$new" "$tmp/l8attn.mlir" --batch-sizes=1,64,512 -o "$A/l8attn/new-fp16.qfa"
"$old" $oldflags "$tmp/l8attn.mlir" --batch-sizes=1,64,512 -o "$A/l8attn/old-fp16.qfa"

# What each artifact attends with: the tiled kernel only in the new ones.
for f in "$A"/*/*.qfa; do
  printf '%s: ' "${f#$out/}"
  python3 -c "import json,sys; print(sorted({k['name'] for k in json.load(open(sys.argv[1]))['kernels'] if 'attention' in k['name']}))" "$f"
done

# The runtime's sources (no compiler) and its vendored headers.
git archive HEAD runtime format unittests CMakeLists.txt cmake scripts \
  bench/prefill-attention | tar -x -C "$out/src"
[ -d build-vendor ] || runtime/tools/vendor-headers.sh > /dev/null
cp -r build-vendor "$out/src/"
cp bench/prefill-attention/run.sh "$out/gpu.sh"
git rev-parse HEAD > "$out/COMMIT"
du -sh "$out"
