#!/usr/bin/env bash
# Session 45: the test-set A/B of one more time-model term, a fixed cost per
# block_k step outside the schedulers' max (the barrier and the copies'
# wait), 40.87 cycles, fitted alone with every other parameter held
# (fit.py --free Pstep, training sweeps tune-* and session 44's
# wgmma-sweep): regret mean 1.059x -> 1.036x on them (int4-g128 1.049x ->
# 1.026x, NF4 1.092x -> 1.053x, NVFP4 1.060x -> 1.085x), rms log error
# 0.250 -> 0.257. Session 36's three-term refit gained on its training
# sweeps too and did not on the zoo, so only this A/B can keep it.
# OLD (`-a`): main; NEW (`-b`): main with pstep.patch (MmaTimeModel.cpp,
# fit.py, params.json). It moves 161 of 1040 zoo cells
# (pstep-changes.json, batches 3-256, every format). Carry ["build-s81"]
# (git-ignored), made by
#   python3 bench/cost-model/tiling_changes.py OLD NEW --json changes.json
#   python3 bench/cost-model/make-zoo-ab.py OLD NEW changes.json build-s81/ab
#   cp build-s61/vendor.tgz build-s81/
# (31 runs x 2, about 316 s estimated; pairs in a random order, so a cut
# budget leaves a sample). Summary: bench/wgmma-producer/ab-summary.py.
# Run as  BUDGET=360 bash bench/results/2026-12-06-s45/pstep-ab.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s81/vendor.tgz
ZOO_WORK=/tmp/s45ps bash bench/zoo/run-zoo.sh build-s81/ab "${BUDGET:-360}" | tail -3
mv "$out/zoo.tgz" "$out/pstep-ab.tgz"
nvidia-smi -L > "$out/gpu.txt"
