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
ls -la "$out" "$out/llama3-8b"
