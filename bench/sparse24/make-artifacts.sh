#!/usr/bin/env bash
# Compiles the 2:4 GPU round (issue 20, part 2) here, where the compiler is,
# into OUT (default .devcarry/sparse24, git-ignored; carry it whole to the
# GPU machine and run bench/sparse24/run.sh there):
#
# - OUT/artifacts/<format>-<N>x<K>.qfa: one weight per artifact, the
#   default compile a user gets (no --tuning-db, default --chip = sm_90),
#   batches 8, 16, 32, 64, 128, 512, for 2:4 f16, 2:4 + int4-g128,
#   2:4 + uint4-g128 (integer zero points), 2:4 + int8 (per channel) and
#   the dense int4-g128 each 2:4 format is compared with;
# - OUT/runs.txt: one qfuse-bench run per artifact (name, then arguments):
#   --check compares every batch's plan with the C++ reference on random
#   weights and inputs, --gemm times cuBLAS fp16 at the same shapes;
# - OUT/COMMIT, OUT/COMPILE (the exact commands), OUT/compile.log (remarks:
#   which batches run the fallback), and the round's scripts.
#
#   bench/sparse24/make-artifacts.sh [build dir, default build] [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
out="${2:-.devcarry/sparse24}"
compile="$build/bin/qfuse-compile"
batches="8,16,32,64,128,512"
shapes="4096x4096 4096x14336 14336x4096 1024x4096"
[ -x "$compile" ] || { echo "no $compile" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/artifacts"
git rev-parse --short HEAD > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
: > "$out/COMPILE"
: > "$out/compile.log"
: > "$out/runs.txt"
encoding() {
  case "$1" in
    sp-f16) echo "f16, sparse = 2:4" ;;
    sp-int4) echo "int4, group = 128, scale = f16, sparse = 2:4" ;;
    sp-uint4) echo "uint4, group = 128, scale = f16, zero = int, sparse = 2:4" ;;
    sp-int8) echo "int8, per_channel, scale = f16, sparse = 2:4" ;;
    int4) echo "int4, group = 128, scale = f16" ;;
  esac
}
for fmt in sp-f16 sp-int4 sp-uint4 sp-int8 int4; do
  for shape in $shapes; do
    n="${shape%x*}" k="${shape#*x}"
    name="$fmt-${n}x${k}"
    enc="$(encoding "$fmt")"
    cat > "$out/artifacts/$name.mlir" <<IR
// bench/sparse24: $fmt, N = $n, K = $k
func.func @w(%x: tensor<?x${k}xf16>) -> tensor<?x${n}xf16> {
  %w = qf.weight_ref "w" : !qf.weight<${n}x${k}, #qf.enc<$enc>>
  %y = qf.matmul %x, %w : tensor<?x${k}xf16>, !qf.weight<${n}x${k}, #qf.enc<$enc>> -> tensor<?x${n}xf16>
  return %y : tensor<?x${n}xf16>
}
IR
    cmd="$compile $out/artifacts/$name.mlir --batch-sizes=$batches -o $out/artifacts/$name.qfa"
    echo "$cmd" >> "$out/COMPILE"
    { echo "== $name"; $cmd 2>&1 | grep -E "remark: M = " | sed 's/^.*remark: //' || true; } >> "$out/compile.log"
    [ -f "$out/artifacts/$name.qfa" ] || { echo "FAILED $name" >&2; exit 1; }
    gemms=""
    for b in ${batches//,/ }; do gemms="$gemms --gemm ${b}x${n}x${k}"; done
    echo "$name --artifact artifacts/$name.qfa --batch $batches$gemms --check" >> "$out/runs.txt"
  done
done
cp "$here/run.sh" "$here/summarize.py" "$out/"
echo "make-artifacts: $(wc -l < "$out/runs.txt") runs, $(du -sh "$out/artifacts" | cut -f1) in $out"
