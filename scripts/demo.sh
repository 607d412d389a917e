#!/usr/bin/env bash
# The main job: compile the example layers in examples/ into artifacts, show
# what the pipeline chose (IR and roofline per fused matmul), and run them on
# the GPU where one is present.
set -euo pipefail
build="${1:-build}"
bin="$build/bin"
out="$build/demo"
mkdir -p "$out"
for f in examples/*.mlir; do
  name="$(basename "$f" .mlir)"
  echo "=== $f"
  echo "--- after fusion, tiling and layout selection (with roofline):"
  "$bin/qfuse-opt" "$f" --canonicalize --qf-fuse-dequant-matmul \
    --qf-select-tiling --qf-choose-layout --qf-roofline \
    --mlir-print-op-on-diagnostic=false 2>&1
  "$bin/qfuse-compile" "$f" --batch-sizes=1,2,4,8 -o "$out/$name.qfa"
  echo "--- artifact: $out/$name.qfa ($(wc -c < "$out/$name.qfa") bytes)"
  if [ -x "$bin/qfuse-bench" ] && command -v nvidia-smi > /dev/null 2>&1 \
     && nvidia-smi -L > /dev/null 2>&1; then
    "$bin/qfuse-bench" artifact --artifact "$out/$name.qfa" --check
  else
    echo "--- no GPU here: the artifact is compiled but not run"
  fi
done
