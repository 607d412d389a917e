#!/usr/bin/env bash
# Prepared in session 39 for the next device call (no device time left).
# Carry ["build-s46"] (git-ignored), made on the compile machine by
#   (qfuse-compile of 92f0994 as OLD; the same with matvec-rule.patch as NEW)
#   python3 bench/cost-model/tiling_changes.py OLD NEW --chip sm_90a --json build-s46/matvec-cells.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW build-s46/matvec-cells.json build-s46/mv --chip sm_90a
#   cp build-s44/vendor.tgz build-s44/b1.txz build-s46/
# b1/: every listed batch-1 matvec tiling of Llama-3-8B's projections
#      (training shapes), int4-g128 and NF4: session 39 ran it on an H100
#      (b1-h100/); this is the H200's answer to which rule it wants.
# mv/: the matvec rule of matvec-rule.patch (4 rows a warp with split_k 2
#      tried first; 128 bytes in flight a lane for table formats) against
#      today's, on the 73 zoo cells (21 runs x 2) it changes, each plan
#      checked. Adopt only if the H200's b1 sweep agrees and the zoo A/B
#      is faster (b / a < 1) with no format slower.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s39/r2.sh  (about 300 s)
set -uo pipefail
. bench/round-lib.sh
out="${OUT:-$PWD/gpu-out}"
budget=${BUDGET:-300}
start=$(date +%s)
tar xzf build-s46/vendor.tgz
xz -dc build-s46/b1.txz | tar xf - -C build-s46
round_start /tmp/s39b1 b1.tgz $(( budget / 3 ))
# (next.sh: r3.sh's run-zoo.sh built one already)
if [ -x build-gpu/bin/qfuse-bench ]; then round_bench=$PWD/build-gpu/bin/qfuse-bench
else round_build_bench || exit 1; fi
while read -r name args; do round_run build-s46 $name $args; done \
  < build-s46/artifacts/runs.txt
left=$(( budget - ($(date +%s) - start) - 10 ))
QFUSE_BENCH=$round_bench ZOO_WORK=/tmp/s39mv bash bench/zoo/run-zoo.sh build-s46/mv $left | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s39mv > /tmp/s39mv/zoo/ab-summary.md 2>&1
tail -14 /tmp/s39mv/zoo/ab-summary.md
mv "$out/zoo.tgz" "$out/mv.tgz"
