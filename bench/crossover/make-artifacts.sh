#!/usr/bin/env bash
# The matvec / tensor-core crossover below batch 8, measured on the TRAINING
# shapes only (Llama-3-8B and Qwen2.5-7B projections, the shapes the tuning
# database and the cost model were fitted on; the zoo stays the test set).
# Each (shape, format) is compiled twice for batches 2-8: `-mv` keeps the
# matvec at every batch (--tensor-core-min-batch=9), `-mma` runs the
# tensor-core kernel wherever it takes the weight (--tensor-core-min-batch=2
# --tensor-core-small-min-weights=0). Writes a folder bench/zoo/run-zoo.sh
# runs on the GPU machine (artifacts.tgz, runs.txt: every plan --check'ed
# and timed against cuBLAS fp16 in the same process).
#
#   bench/crossover/make-artifacts.sh [build dir] [out dir]
#   ONLY='^q7b-' bench/crossover/make-artifacts.sh ...   # shapes by name
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
out="${2:-build-xover}"
compile="$(cd "$build" && pwd)/bin/qfuse-compile"
batches="2,3,4,5,6,7,8"
# name N K: Llama-3-8B q/o, k/v, gate/up (one), down; Qwen2.5-7B q/o, k/v, down.
shapes="l8b-q 4096 4096
l8b-kv 1024 4096
l8b-gate 14336 4096
l8b-down 4096 14336
q7b-q 3584 3584
q7b-kv 512 3584
q7b-down 3584 18944"
declare -A enc=(
  [int4-g128]="int4, group = 128, scale = f16"
  [nvfp4]="fp4e2m1, group = 16, scale = f8E4M3FN, global_scale"
  [int8]="int8, per_channel, scale = f16")
rm -rf "$out"; mkdir -p "$out/artifacts"
git -C "$here" rev-parse --short HEAD > "$out/COMMIT"
echo "qfuse-compile <shape>-<format>.mlir --batch-sizes=$batches, -mv: --tensor-core-min-batch=9; -mma: --tensor-core-min-batch=2 --tensor-core-small-min-weights=0 (no --tuning-db, --chip=sm_90a)" > "$out/COMPILE"
: > "$out/runs.txt"
gemms=""
while read -r name n k; do
  [[ "$name" =~ ${ONLY:-.} ]] || continue
  gemms=""
  for b in ${batches//,/ }; do gemms="$gemms --gemm ${b}x${n}x${k}"; done
  for fmt in int4-g128 nvfp4 int8; do
    f="$out/artifacts/$name-$fmt.mlir"
    cat > "$f" <<IR
#enc = #qf.enc<${enc[$fmt]}>
func.func @xover(%x: tensor<?x${k}xf16>) -> tensor<?x${n}xf16> {
  %w = qf.weight_ref "w" : !qf.weight<${n}x${k}, #enc>
  %y = qf.matmul %x, %w : tensor<?x${k}xf16>, !qf.weight<${n}x${k}, #enc> -> tensor<?x${n}xf16>
  return %y : tensor<?x${n}xf16>
}
IR
    "$compile" "$f" --batch-sizes=$batches --chip=sm_90a --tensor-core-min-batch=9 \
      -o "${f%.mlir}-mv.qfa"
    "$compile" "$f" --batch-sizes=$batches --chip=sm_90a --tensor-core-min-batch=2 \
      --tensor-core-small-min-weights=0 -o "${f%.mlir}-mma.qfa"
    rm "$f"
    for v in mv mma; do
      echo "$name-$fmt-$v 4 --artifact $out/artifacts/$name-$fmt-$v.qfa --batch $batches$gemms --check" >> "$out/runs.txt"
    done
  done
done <<< "$shapes"
tar czf "$out/artifacts.tgz" -C "$out" artifacts && rm -rf "$out/artifacts"
echo "make-artifacts: $(wc -l < "$out/runs.txt") runs, $(du -sh "$out/artifacts.tgz" | cut -f1) packed, in $out"
