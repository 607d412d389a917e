#!/usr/bin/env bash
# A/B of the warp-specialized wgmma kernel (`--qf-wgmma-producer`) on
# TRAINING shapes (Llama-3-8B and Qwen2.5-7B projections; the zoo stays the
# test set): each shape compiled the default way for sm_90a (no tuning
# database) as `-a` and with the producer as `-b` (FLAGS_B), or, with
# TILING set, both on that explicit tiling. COMPILER_B=<qfuse-compile of
# another build> compiles `-b` with that build instead (an A/B of two
# commits; FLAGS_B then defaults to none), CHIP the target (default
# sm_90a). Writes a folder
# bench/zoo/run-zoo.sh runs on the GPU machine (every plan checked with
# --check and timed against cuBLAS fp16 in the same process).
#
#   bench/wgmma-producer/make-ab.sh [build dir] [out dir]
#   SHAPES='name N K [gated]\n...' BATCHES=128,256 FLAGS_B=... TILING=...
#   COMPILER_B=/path/to/qfuse-compile CHIP=sm_90 ENC='int8, per_channel, scale = f16'
set -euo pipefail
build="${1:-build}"
out="${2:-build-ab}"
compile="$(cd "$build" && pwd)/bin/qfuse-compile"
batches="${BATCHES:-128,256,512}"
compile_b="${COMPILER_B:-$compile}"
default_flags_b=--qf-wgmma-producer
[ -n "${COMPILER_B:-}" ] && default_flags_b=""
flags_b="${FLAGS_B-$default_flags_b}"
chip="${CHIP:-sm_90a}"
shapes="${SHAPES:-l8b-q 4096 4096
l8b-kv 1024 4096
l8b-down 4096 14336
q7b-q 3584 3584
q7b-down 3584 18944
l8b-gateup 14336 4096 gated}"
enc="${ENC:-int4, group = 128, scale = f16}"
rm -rf "$out"; mkdir -p "$out/artifacts"
git rev-parse --short HEAD > "$out/COMMIT"
echo "qfuse-compile <shape>.mlir --batch-sizes=$batches --chip=$chip: -a default, -b ${COMPILER_B:+$COMPILER_B }$flags_b (no --tuning-db); ENC='$enc' TILING='${TILING:-}'" > "$out/COMPILE"
: > "$out/runs.txt"
while read -r name n k gated; do
  [ -n "$name" ] || continue
  f="$out/artifacts/$name.mlir"
  w="!qf.weight<${n}x${k}, #qf.enc<$enc>>"
  attrs=""
  [ -n "${TILING:-}" ] && attrs="tiling = #qf.tiling<$TILING>"
  up=""; upref=""
  if [ "${gated:-}" = gated ]; then
    up=" up(%u : $w)"; upref="  %u = qf.weight_ref \"u\" : $w"
    attrs="${attrs:+$attrs, }activation = #qf<activation silu_mul>"
  fi
  op="qf.matmul"; braces=""
  [ -n "$attrs" ] && { op="qf.fused_matmul"; braces=" {$attrs}"; }
  {
    echo "func.func @ab(%x: tensor<?x${k}xf16>) -> tensor<?x${n}xf16> {"
    echo "  %w = qf.weight_ref \"w\" : $w"
    [ -n "$upref" ] && echo "$upref"
    echo "  %y = $op %x, %w$up$braces : tensor<?x${k}xf16>, $w -> tensor<?x${n}xf16>"
    echo "  return %y : tensor<?x${n}xf16>"
    echo "}"
  } > "$f"
  "$compile" "$f" --batch-sizes="$batches" --chip="$chip" -o "${f%.mlir}-a.qfa"
  "$compile_b" "$f" --batch-sizes="$batches" --chip="$chip" $flags_b -o "${f%.mlir}-b.qfa"
  rm "$f"
  gemms=""; for b in ${batches//,/ }; do gemms="$gemms --gemm ${b}x${n}x${k}"; done
  for v in a b; do
    echo "$name-$v 10 --artifact $out/artifacts/$name-$v.qfa --batch $batches$gemms --check" >> "$out/runs.txt"
  done
done <<< "$shapes"
tar czf "$out/artifacts.tgz" -C "$out" artifacts && rm -rf "$out/artifacts"
echo "make-ab: $(wc -l < "$out/runs.txt") runs, $(du -sh "$out/artifacts.tgz" | cut -f1) packed, in $out"
