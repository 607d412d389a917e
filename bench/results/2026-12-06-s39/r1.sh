#!/usr/bin/env bash
# Session 39's warp_n = 16 A/B on the GPU machine. Carry ["build-s45"]
# (git-ignored), made on the compile machine by
#   python3 bench/results/2026-12-06-s39/make-flag-ab.py train build-s45/train
#   python3 bench/results/2026-12-06-s39/make-flag-ab.py zoo build-s45/zoo
# train/: Llama-3-8B's qkv, o, gate_up, down (the training set), zoo/: nine
# zoo entries (the test set); int4-g128, NF4, NVFP4, int8 at batches 3-96,
# -a the default compile, -b --mma-warp-n=16, every plan checked.
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s39/r1.sh  (about 500 s)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
budget=${BUDGET:-500}
start=$(date +%s)
ZOO_WORK=/tmp/s39train bash bench/zoo/run-zoo.sh build-s45/train 200 | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s39train > /tmp/s39train/zoo/ab-summary.md 2>&1
tail -12 /tmp/s39train/zoo/ab-summary.md
tar czf "$out/train.tgz" -C /tmp/s39train zoo; rm -f "$out/zoo.tgz"
left=$(( budget - ($(date +%s) - start) - 10 ))
QFUSE_BENCH=$PWD/build-gpu/bin/qfuse-bench ZOO_WORK=/tmp/s39zoo \
  bash bench/zoo/run-zoo.sh build-s45/zoo $left | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s39zoo > /tmp/s39zoo/zoo/ab-summary.md 2>&1
tail -12 /tmp/s39zoo/zoo/ab-summary.md
tar czf "$out/zoo-ab.tgz" -C /tmp/s39zoo zoo; rm -f "$out/zoo.tgz"
