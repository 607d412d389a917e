#!/usr/bin/env bash
# Compiles the quantize-at-load GPU round here, where the compiler is, into
# OUT (default build-rtn, git-ignored; carry it whole to the GPU machine and
# run bench/quantize-at-load/run.sh there):
#
# - OUT/quantize-formats.qfa: the qf.quantize kernel of every encoding the
#   generated quantizer takes (test/Tools/qfuse-cpu-check/Inputs/
#   quantize-formats.mlir), for sm_80, sm_90 and sm_90a: QuantizeGpuTest's
#   artifact;
# - OUT/llama3-8b/qfuse-int4-g128.qfa and qfuse-int4-g128.quantize.qfa: the
#   default compile a user gets (`python3 -m qfuse compile`, default chips),
#   which writes the model's round-to-nearest kernels beside the model;
#   that file also holds the qf_gather_fields kernels that make the kernel
#   layouts (and pack GPTQ's codes) on the device;
# - OUT/llama3-8b/qfuse-sp-int4.qfa and qfuse-sp-f16.qfa (with their
#   .quantize.qfa): the 2:4+int4 and the unquantized 2:4 (f16 kept values)
#   compiles at batches 1 and 8, whose quantize artifacts round the 2:4
#   weights on the GPU and gather their 2:4 layouts (the 2:4 fragments,
#   16-bit kept values included, and the matvec's tiled 1 x 32) there;
# - OUT/llama3-8b/qfuse-gptq-int4-g128.qfa and qfuse-fp16-calib-256.qfa:
#   the GPTQ round's (qfuse-quantize 8 x 256 into the qfuse format, whose
#   codes are packed by the quantize artifact's gather kernels);
# - OUT/COMMIT, OUT/COMPILE (the exact commands), OUT/compile.log.
#
#   bench/quantize-at-load/make-artifacts.sh [build dir, default build] [OUT]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="${2:-$root/build-rtn}"
[ -x "$build/bin/qfuse-compile" ] || { echo "no $build/bin/qfuse-compile" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/llama3-8b"
git -C "$root" rev-parse --short HEAD > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
run() { echo "$*" >> "$out/COMPILE"; "$@" >> "$out/compile.log" 2>&1; }
run "$build/bin/qfuse-compile" "$root/test/Tools/qfuse-cpu-check/Inputs/quantize-formats.mlir" \
  --fuse=none --chip=sm_80,sm_90,sm_90a -o "$out/quantize-formats.qfa"
run env QFUSE_BUILD_DIR="$build" PYTHONPATH="$root/python-frontend" python3 -m qfuse compile \
  --config "$root/examples/configs/llama3-8b.json" --encoding int4-g128 --batch-sizes 1,8 \
  -o "$out/llama3-8b/qfuse-int4-g128.qfa"
for sp in "sp-int4 2:4+int4" "sp-f16 2:4"; do
  set -- $sp
  run env QFUSE_BUILD_DIR="$build" PYTHONPATH="$root/python-frontend" python3 -m qfuse compile \
    --config "$root/examples/configs/llama3-8b.json" --encoding "$2" --batch-sizes 1,8 \
    -o "$out/llama3-8b/qfuse-$1.qfa"
done
run env QFUSE_BUILD_DIR="$build" PYTHONPATH="$root/python-frontend" python3 -m qfuse compile-gptq \
  --config "$root/examples/configs/llama3-8b.json" --encoding int4-g128 \
  -o "$out/llama3-8b/qfuse-gptq-int4-g128.qfa"
tmp=$(mktemp -d)
run env PYTHONPATH="$root/python-frontend" python3 -m qfuse emit \
  --config "$root/examples/configs/llama3-8b.json" --encoding fp16 --batch dynamic -o "$tmp/l8.mlir"
run "$build/bin/qfuse-compile" "$tmp/l8.mlir" --batch-sizes=1,256 --chip=sm_90 \
  -o "$out/llama3-8b/qfuse-fp16-calib-256.qfa"
rm -rf "$tmp"
ls -la "$out" "$out/llama3-8b"
du -sh "$out"
