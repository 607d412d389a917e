#!/usr/bin/env bash
# Session 36, device call 2: issue 20's act_order and 2:4 rounds restated
# with qfuse-bench's one-graph timing (756ca12) and the compiler of 54eabb9.
# Carry ["build-s38"]: ao.txz, sp.txz (tar of the folders made by
#   PARTS="qkvn downs o attno" MODELS="qwen2.5-7b:3584:512:18944 \
#     qwen2.5-14b:5120:1024:13824 llama3-8b:4096:1024:14336" \
#     bench/act-order/make-artifacts.sh build build-s38/ao
#   NO_MMA=1 bench/sparse24/make-artifacts.sh build build-s38/sp
# ) and vendor.tgz. qfuse-bench is built from the carried tree; every run
# line of both rounds is checked (--check) and timed against the plain
# int4-g128 (act_order) or dense int4-g128 and cuBLAS fp16 (2:4) artifact
# in the same process; the fallback-* lines (act_order with distinct perms,
# checks only) run last, while the budget allows.
# Run as  BUDGET=<s> bash bench/results/2026-12-05-s36/r2.sh
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-480}))
left() { echo $((deadline - $(date +%s))); }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s36r2; rm -rf $res; mkdir -p $res/ao $res/sp
archive() { tar czf "$out/r2.tgz" -C /tmp s36r2; }
tar xzf build-s38/vendor.tgz
for t in ao sp; do tar xJf build-s38/$t.txz -C build-s38; done
nvidia-smi -L > $res/gpu.txt 2>&1
export QFUSE_GIT_COMMIT="$(cat build-s38/ao/COMMIT)+s36r2"
b=/tmp/qb-s36; bench=$b/bin/qfuse-bench
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
  > $res/build.log 2>&1 || { tail -30 $res/build.log; archive; exit 1; }
echo "built in $(( $(date +%s) - t_start )) s"
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
grep "^check-" build-s38/ao/runs.txt > /tmp/ao-check.txt
while read -r name args; do run build-s38/ao $res/ao $name $args; done < /tmp/ao-check.txt
while read -r name args; do run build-s38/sp $res/sp $name $args; done < build-s38/sp/runs.txt
grep "^fallback-" build-s38/ao/runs.txt > /tmp/ao-fb.txt
while read -r name args; do run build-s38/ao $res/ao $name $args; done < /tmp/ao-fb.txt
grep -h "rel err" $res/*/*.log | grep -vc " ok" | sed 's/^/checks not ok: /'
python3 build-s38/ao/summarize.py $res/ao > $res/ao/summary.txt 2>&1; tail -30 $res/ao/summary.txt
python3 build-s38/sp/summarize.py $res/sp > $res/sp/summary.txt 2>&1; tail -12 $res/sp/summary.txt
archive
