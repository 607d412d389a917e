#!/usr/bin/env bash
# Prepared in session 47: A/Bs on the zoo entries no A/B has used (the 98
# that bench/zoo/plan.json leaves out of its sampled runs; 28 of them
# within its max_weights, every valid format, every batch, no q/k/v
# groups: heldout_plan.py), every plan checked, cuBLAS fp16 in the same
# process.
#   WHICH=m32: the landed block_m 32 at 33-64 rows (a152648) against main
#     before it (c02a64db): does it hold on a test set it was not tested
#     on? 132 cells change (m32-heldout-changes.json), 110 runs x 2,
#     carry ["build-s88"].
#   WHICH=s4b: s4b.patch (split_k 4 for block_n 64 at 64-row blocks past
#     batch 32; listeval.txt: 0.80-0.99 of main's time on the training
#     large-K shapes at M = 64 and 96) against main: 83 cells
#     (s4b-heldout-changes.json), 75 runs x 2, carry ["build-s87"].
# Carries (git-ignored), made by
#   OLD=qfuse-compile of c02a64db, MAIN=of a152648 or later (no compiler
#   change since), S4B=MAIN with s4b.patch applied
#   python3 bench/results/2026-12-06-s47/heldout_plan.py heldout-plan.json
#   python3 bench/cost-model/tiling_changes.py OLD MAIN --plan heldout-plan.json --chip sm_90a --json build-s88/changes.json
#   python3 bench/cost-model/make-zoo-ab.py OLD MAIN build-s88/changes.json build-s88/ab
#   python3 bench/cost-model/tiling_changes.py MAIN S4B --plan heldout-plan.json --chip sm_90a --json build-s87/changes.json
#   python3 bench/cost-model/make-zoo-ab.py MAIN S4B build-s87/changes.json build-s87/ab
#   cp build-s61/vendor.tgz build-s87/; cp build-s61/vendor.tgz build-s88/
# (the changes must equal the committed *-heldout-changes.json).
# Summarize: python3 bench/wgmma-producer/ab-summary.py <unpacked zoo> --changes <changes.json>
# Run as  WHICH=m32 BUDGET=540 bash bench/results/2026-12-06-s47/next-heldout.sh   (carry ["build-s88"])
#         WHICH=s4b BUDGET=540 bash bench/results/2026-12-06-s47/next-heldout.sh   (carry ["build-s87"])
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"
case "${WHICH:-}" in
  m32) dir=build-s88 ;;
  s4b) dir=build-s87 ;;
  *) echo "next-heldout.sh: WHICH must be m32 or s4b" >&2; exit 2 ;;
esac
tar xzf $dir/vendor.tgz
ZOO_WORK=/tmp/s47-$WHICH bash bench/zoo/run-zoo.sh $dir/ab "${BUDGET:-540}" | tail -3
mv "$out/zoo.tgz" "$out/heldout-$WHICH.tgz"
nvidia-smi -L > "$out/gpu.txt"
