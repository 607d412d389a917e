#!/usr/bin/env bash
# Lists the kernels ptxas spills in, over every qfuse-compile input
# (test/Tools/qfuse-compile/Inputs and examples/): sm_90 (qfuse-compile's
# default chip) at batches 3-512 and sm_90a (wgmma) at 128-512, one line a
# spilling kernel, "<input> <chip>: <kernel>: <ptxas line>", then a count.
#
#   scripts/ptxas-spills.sh [build dir, default build]
set -uo pipefail
build="${1:-build}"
ptxas="${PTXAS:-/usr/local/cuda/bin/ptxas}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
spilling=0
for f in test/Tools/qfuse-compile/Inputs/*.mlir examples/*.mlir; do
  for cfg in "sm_90 3,8,17,32,64,100,128,256,512" "sm_90a 128,256,384,512"; do
    read -r chip batches <<< "$cfg"
    "$build/bin/qfuse-compile" "$f" --chip="$chip" --batch-sizes="$batches" \
      --emit=ptx -o "$tmp/k.ptx" > /dev/null 2>&1 || continue
    "$ptxas" -arch="$chip" -v "$tmp/k.ptx" -o "$tmp/k.cubin" 2>&1 |
      awk -v src="$(basename "$f") $chip" '/Function properties for/ { k = $NF }
        /spill stores/ && $5 != 0 { print src ": " k ": " $0 }' > "$tmp/s.txt"
    cat "$tmp/s.txt"
    spilling=$((spilling + $(wc -l < "$tmp/s.txt")))
  done
done
echo "$spilling spilling kernel(s)"
