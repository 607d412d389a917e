#!/usr/bin/env bash
# Prepared in session 44 for the next session: the test-set A/B of one
# more mma.sp rule, not yet on main: no clusters for block_n 128 at any
# batch (main has it past 16 rows only), i.e. in forEachMmaCandidate
#   if (sparse && (c.splitK * c.clusterK > kMaxSparseKSlices ||
#                  (c.blockN > 64 && c.clusterK > 1)))
#     continue;
# On the training sweep (sparse-wide-*/, M = 8 and 16) it takes 0.982 of
# the defaults' time (worst 1.001); Llama-3-8B's up projection in 2:4 +
# int4 is where it matters. Here: 2:4 + int4 and 2:4 f16 at batches 2-16
# on the same 8 zoo entries as sparse-ab.sh, the 13 cells whose artifacts
# differ, every plan checked. Carry ["build-s76"] (git-ignored), made by
#   python3 bench/sparse24/make-ab.py build-s51/qfuse-compile-s44 \
#     build-s51/qfuse-compile-sp16 build-s76/ab --batches 2,4,8,16
#   cp build-s61/vendor.tgz build-s76/
# OLD: main's compiler of 10e6b0cb (build-s51/qfuse-compile-s44); NEW: the
# same with the rule above (build-s51/qfuse-compile-sp16). Land the rule
# if b / a holds at or under 1.0. Summarize with bench/sparse24/ab-summary.py.
# Run as  BUDGET=120 bash bench/results/2026-12-06-s44/sparse-ab16.sh
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
tar xzf build-s76/vendor.tgz
ZOO_WORK=/tmp/s45spab16 bash bench/zoo/run-zoo.sh build-s76/ab "${BUDGET:-120}" | tail -4
mv "$out/zoo.tgz" "$out/sparse-ab16.tgz"
