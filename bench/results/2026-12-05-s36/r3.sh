#!/usr/bin/env bash
# Prepared in session 36 for the next device call (not run: no device time
# left). Carry ["build-s38"] as r2.sh made it (its header says how). With
# the qfuse-bench of this commit (perms stay bound while the weight copies
# rotate in one graph), in order while the budget allows:
#   1. act_order qkvn (q/k/v behind the RMSNorm that writes the permuted
#      input) of three models, ao / aop / plain int4-g128, checked and
#      timed in one process: r2's runs failed on the capture bug;
#   2. the 2:4 shapes r2's budget left out (1024x4096, 5120x13824,
#      3584x18944);
#   3. the act_order fallback checks (perms that differ), no timing.
# Run as  BUDGET=<s> bash bench/results/2026-12-05-s36/r3.sh
set -uo pipefail
. bench/round-lib.sh
round_start /tmp/s36r3 r3.tgz "${BUDGET:-480}"
tar xzf build-s38/vendor.tgz
for t in ao sp; do tar xJf build-s38/$t.txz -C build-s38; done
export QFUSE_GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)+s36r3"
round_build_bench || exit 1
lines() { grep -E "$1" "$2"; } # run lines of a round's runs.txt
round_sub=ao
while read -r name args; do round_run build-s38/ao $name $args; done \
  < <(lines "^check-.*-qkvn " build-s38/ao/runs.txt)
round_sub=sp
while read -r name args; do round_run build-s38/sp $name $args; done \
  < <(lines "^(check|time)-(1024x4096|5120x13824|3584x18944) " build-s38/sp/runs.txt)
round_sub=ao
while read -r name args; do round_run build-s38/ao $name $args; done \
  < <(lines "^fallback-" build-s38/ao/runs.txt)
round_checks_not_ok
python3 build-s38/ao/summarize.py /tmp/s36r3/ao > /tmp/s36r3/ao/summary.txt 2>&1
tail -30 /tmp/s36r3/ao/summary.txt
python3 build-s38/sp/summarize.py /tmp/s36r3/sp > /tmp/s36r3/sp/summary.txt 2>&1
tail -12 /tmp/s36r3/sp/summary.txt
round_archive
