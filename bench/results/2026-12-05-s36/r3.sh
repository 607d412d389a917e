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
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-480}))
left() { echo $((deadline - $(date +%s))); }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s36r3; rm -rf $res; mkdir -p $res/ao $res/sp
archive() { tar czf "$out/r3.tgz" -C /tmp s36r3; }
tar xzf build-s38/vendor.tgz
for t in ao sp; do tar xJf build-s38/$t.txz -C build-s38; done
nvidia-smi -L > $res/gpu.txt 2>&1
export QFUSE_GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)+s36r3"
b=/tmp/qb-s36r3; bench=$b/bin/qfuse-bench
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
  > $res/build.log 2>&1 || { tail -30 $res/build.log; archive; exit 1; }
run() { # dir resdir name args...
  local d=$1 r=$2 name=$3; shift 3
  [ "$(left)" -lt 20 ] && { echo "skip $name"; return; }
  local t0=$(date +%s)
  (cd $d && timeout $(( $(left) - 5 )) $bench "$@" --json $r/$name.json) > $r/$name.log 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> $r/manifest.tsv
  echo "$rc $name ($(( $(date +%s) - t0 )) s)"; [ $rc -ne 0 ] && grep -E "FAIL|rror" $r/$name.log | head -3
  archive
}
grep "^check-.*-qkvn " build-s38/ao/runs.txt > /tmp/r3-ao.txt
while read -r name args; do run build-s38/ao $res/ao $name $args; done < /tmp/r3-ao.txt
grep -E "^(check|time)-(1024x4096|5120x13824|3584x18944) " build-s38/sp/runs.txt > /tmp/r3-sp.txt
while read -r name args; do run build-s38/sp $res/sp $name $args; done < /tmp/r3-sp.txt
grep "^fallback-" build-s38/ao/runs.txt > /tmp/r3-fb.txt
while read -r name args; do run build-s38/ao $res/ao $name $args; done < /tmp/r3-fb.txt
grep -h "rel err" $res/*/*.log | grep -vc " ok" | sed 's/^/checks not ok: /'
python3 build-s38/ao/summarize.py $res/ao > $res/ao/summary.txt 2>&1; tail -30 $res/ao/summary.txt
python3 build-s38/sp/summarize.py $res/sp > $res/sp/summary.txt 2>&1; tail -12 $res/sp/summary.txt
archive
