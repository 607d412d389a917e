#!/usr/bin/env bash
# Session 39: table formats on the tensor-core kernel from batch 3 on large
# weights (--tensor-core-min-batch=3; the default starts them at 5) against
# the default's matvec at batches 3 and 4, Llama-3-8B's qkv, o, gate_up,
# down (the training set) in NF4, NVFP4, MXFP4, each plan checked. Carry
# ["build-s47"], made by
#   FLAG=--tensor-core-min-batch=3 FORMATS=nf4,nvfp4,mxfp4 BATCHES=3,4 \
#     python3 bench/results/2026-12-06-s39/make-flag-ab.py train build-s47/train
# Run as  BUDGET=<s> bash bench/results/2026-12-06-s39/r3.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
ZOO_WORK=/tmp/s39tc bash bench/zoo/run-zoo.sh build-s47/train "${BUDGET:-200}" | tail -3
python3 bench/wgmma-producer/ab-summary.py /tmp/s39tc > /tmp/s39tc/zoo/ab-summary.md 2>&1
tail -40 /tmp/s39tc/zoo/ab-summary.md
mv "$out/zoo.tgz" "$out/tc-min3.tgz"
