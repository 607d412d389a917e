#!/usr/bin/env bash
# Compiles the 2:4 GPU round here, where the compiler is, into OUT (default
# build-sparse24, git-ignored; carry it whole to the GPU machine and run
# bench/sparse24/run.sh there):
#
# - OUT/artifacts/<format>-<N>x<K>.qfa: one weight per artifact, named
#   after its format, the default compile a user gets (no --tuning-db,
#   default --chip = sm_90), batches 1 to 512, for 2:4 f16, 2:4 + int4-g128,
#   2:4 + uint4-g128 (integer zero points), 2:4 + int8 (per channel) and
#   the dense int4-g128 each 2:4 format is compared with;
# - OUT/artifacts/<format>-mma-<N>x<K>.qfa: each 2:4 format at BATCHES'
#   batches up to 8 on mma.sp instead of the default matvec, through a
#   tuning database (OUT/artifacts/<format>-mma-<N>x<K>.db.json) that gives
#   them the tiling the cost model picks at 16;
# - OUT/runs.txt: one qfuse-bench process per shape and batch set (name,
#   then arguments): every format's artifact and cuBLAS fp16 (--gemm) at
#   the same shape in the same process. "check" runs compare every plan
#   with the C++ reference on random weights and poisoned outputs
#   (--check); the reference's host time grows with batch x N x K, so the
#   shapes past 16M weights check batches 1-64 and time 128 and 512 in a
#   second, unchecked process (placeholder weights);
# - OUT/COMMIT, OUT/COMPILE (the exact commands), OUT/compile.log (remarks:
#   which batches run the fallback), and the round's scripts.
#
#   bench/sparse24/make-artifacts.sh [build dir, default build] [OUT]
#
# MMA_SP_FLAGS (e.g. --qf-mma-sp-meta-per-tile) is passed to every compile;
# SHAPES, FORMATS and BATCHES replace the defaults below, and NO_MMA=1
# leaves out the -mma variants (a shorter round).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
out="${2:-build-sparse24}"
compile="$build/bin/qfuse-compile"
batches="${BATCHES:-1,2,4,8,16,32,64,128,512}"
small_batches="$(echo "$batches" | tr , '\n' | awk '$1 <= 64' | paste -sd,)"
large_batches="$(echo "$batches" | tr , '\n' | awk '$1 > 64' | paste -sd,)"
# The -mma variants' batches: those of BATCHES up to 8 (the dense int4
# artifact they run beside has no others).
mma_batches="$(echo "$batches" | tr , '\n' | awk '$1 <= 8' | paste -sd,)"
[ -n "$mma_batches" ] || NO_MMA=1
# N x K: Llama-3-8B's, and two shapes of models nothing is tuned on, the
# down projections of Qwen2.5-14B (5120 x 13824) and Qwen2.5-7B
# (3584 x 18944).
shapes="${SHAPES:-4096x4096 4096x14336 14336x4096 1024x4096 5120x13824 3584x18944}"
formats="${FORMATS:-sp-f16 sp-int4 sp-uint4 sp-int8 int4}"
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
gemms() { # batches n k
  local g=""
  for b in ${1//,/ }; do g="$g --gemm ${b}x$2x$3"; done
  echo "$g"
}
for shape in $shapes; do
  n="${shape%x*}" k="${shape#*x}"
  artifacts="" mmas=""
  for fmt in $formats; do
    name="$fmt-${n}x${k}"
    enc="$(encoding "$fmt")"
    cat > "$out/artifacts/$name.mlir" <<IR
// bench/sparse24: $fmt, N = $n, K = $k
func.func @w(%x: tensor<?x${k}xf16>) -> tensor<?x${n}xf16> {
  %w = qf.weight_ref "$fmt" : !qf.weight<${n}x${k}, #qf.enc<$enc>>
  %y = qf.matmul %x, %w : tensor<?x${k}xf16>, !qf.weight<${n}x${k}, #qf.enc<$enc>> -> tensor<?x${n}xf16>
  return %y : tensor<?x${n}xf16>
}
IR
    cmd="$compile $out/artifacts/$name.mlir --batch-sizes=$batches ${MMA_SP_FLAGS:-} -o $out/artifacts/$name.qfa"
    echo "$cmd" >> "$out/COMPILE"
    { echo "== $name"; $cmd 2>&1 | grep -E "remark: M = " | sed 's/^.*remark: //' || true; } >> "$out/compile.log"
    [ -f "$out/artifacts/$name.qfa" ] || { echo "FAILED $name" >&2; exit 1; }
    artifacts="$artifacts --artifact artifacts/$name.qfa"
    [ "$fmt" = int4 ] || [ -n "${NO_MMA:-}" ] && continue
    # The same weight on mma.sp at batches 1-8: the tiling chosen at 16.
    tiling="$($compile "$out/artifacts/$name.mlir" --batch-sizes=16 --emit=mlir -o - 2>/dev/null |
      grep -o '#qf.tiling<mma[^>]*>' | head -1 | sed 's/^#qf.tiling<//; s/>$//')"
    [ -n "$tiling" ] || { echo "no mma tiling at 16 for $name" >&2; exit 1; }
    mma="$fmt-mma-${n}x${k}"
    sed "s/\"$fmt\"/\"$fmt-mma\"/" "$out/artifacts/$name.mlir" > "$out/artifacts/$mma.mlir"
    python3 - "$out/artifacts/$mma.db.json" "$n" "$k" "$enc" "$tiling" "$mma_batches" <<'PY'
import json, sys
path, n, k, enc, tiling, batches = sys.argv[1:]
json.dump([{"m": int(m), "n": int(n), "k": int(k), "encoding": enc,
            "tiling": tiling, "measured_us": 0} for m in batches.split(",")],
          open(path, "w"), indent=1)
PY
    cmd="$compile $out/artifacts/$mma.mlir --batch-sizes=$mma_batches --tuning-db=$out/artifacts/$mma.db.json ${MMA_SP_FLAGS:-} -o $out/artifacts/$mma.qfa"
    echo "$cmd" >> "$out/COMPILE"
    $cmd 2>/dev/null
    [ -f "$out/artifacts/$mma.qfa" ] || { echo "FAILED $mma" >&2; exit 1; }
    mmas="$mmas --artifact artifacts/$mma.qfa"
  done
  if [ $((n * k)) -le $((4096 * 4096)) ]; then
    echo "check-${n}x${k}$artifacts --batch $batches$(gemms "$batches" "$n" "$k") --check" >> "$out/runs.txt"
  else
    echo "check-${n}x${k}$artifacts --batch $small_batches$(gemms "$small_batches" "$n" "$k") --check" >> "$out/runs.txt"
    [ -z "$large_batches" ] || echo "time-${n}x${k}$artifacts --batch $large_batches$(gemms "$large_batches" "$n" "$k") --placeholder-weights" >> "$out/runs.txt"
  fi
  [ -n "${NO_MMA:-}" ] || echo "mma-${n}x${k}$mmas --artifact artifacts/int4-${n}x${k}.qfa --batch $mma_batches$(gemms "$mma_batches" "$n" "$k") --check" >> "$out/runs.txt"
done
cp "$here/run.sh" "$here/summarize.py" "$out/"
echo "make-artifacts: $(wc -l < "$out/runs.txt") runs, $(du -sh "$out" | cut -f1) in $out"
