#!/usr/bin/env bash
# Session 45: issue 20's 2:4 targets in one process per cell, on the zoo
# (the test set): dense int4-g128, 2:4 + int4-g128 and 2:4 f16 compiled the
# default way by main's compiler, checked, against cuBLAS fp16. Carry
# ["build-s79"] (git-ignored), made by
#   python3 bench/sparse24/make-vs-dense.py build/bin/qfuse-compile build-s79/vd
#   cp build-s61/vendor.tgz build-s79/
# (6 entries of seed 45, batches 1, 4, 8, 16, 32, 64: 36 runs, about 155 s
# estimated). Summary: bench/sparse24/vs-dense-summary.py.
# Run as  BUDGET=200 bash bench/results/2026-12-06-s45/vs-dense.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s79/vendor.tgz
ZOO_WORK=/tmp/s45vd bash bench/zoo/run-zoo.sh build-s79/vd "${BUDGET:-200}" | tail -3
mv "$out/zoo.tgz" "$out/vs-dense.tgz"
nvidia-smi -L > "$out/gpu.txt"
