#!/usr/bin/env bash
# Prepared in session 38 for the next device call (not run: no device time
# left). Carry ["build-s44"] (git-ignored), made on the compile machine by
#   (the compiler of c0bd3f2 as OLD, the same with MmaTimeModel.cpp's
#    tableDecodeInstrs = 17.1491, sweeps/refit-dectable-params.json, as NEW)
#   python3 bench/cost-model/tiling_changes.py OLD NEW --chip sm_90a --json C.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW C.json build-s44/dec --chip sm_90a
#   (in an empty folder) python3 bench/tune.py prepare --build build \
#     --models llama3-8b --encodings int4-g128 nf4 --batch 1;  tar -> b1.txz
#   cp build-s40/vendor.tgz build-s44/
#   dec/: the 39 zoo cells the table decode refit moves, -a as today, -b
#         refitted, each plan checked, one process per run (12 runs x 2);
#   b1/:  every listed batch-1 matvec tiling of Llama-3-8B's projections
#         (training shapes), int4-g128 and NF4, on the H200: whether the
#         default's 64 bytes in flight a lane is short of this GPU's
#         bandwidth (the zoo round has int4 at 46% of copy at batch 1).
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s38/r5.sh  (about 300 s)
set -uo pipefail
. bench/round-lib.sh
out="${OUT:-$PWD/gpu-out}"
budget=${BUDGET:-300}
tar xzf build-s44/vendor.tgz
tar xJf build-s44/dec/artifacts.txz -C build-s44/dec
xz -dc build-s44/b1.txz | tar xf - -C build-s44
ZOO_WORK=/tmp/s38dec bash bench/zoo/run-zoo.sh build-s44/dec $(( budget / 2 )) | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s38dec > /tmp/s38dec/zoo/ab-summary.md 2>&1
tail -12 /tmp/s38dec/zoo/ab-summary.md
mv "$out/zoo.tgz" "$out/dec.tgz"
round_start /tmp/s38b1 b1.tgz $(( budget / 2 - 20 ))
round_bench=$PWD/build-gpu/bin/qfuse-bench
while read -r name args; do round_run build-s44 $name $args; done \
  < build-s44/artifacts/runs.txt
