#!/usr/bin/env bash
# Session 31, call 1 (carry ["build-s31"]: build-s29's tarballs; artifacts made in session 29,
# bench/results/2026-12-04-h200-s29 says how): branch oproj's runtime
# (16a1661, carried in build-ao29a/src) built once; its GPU tests; then
# timings, most wanted first, while the deadline allows:
#   1. act_order parts attno, qkvn (build-ao29a) and o, downs (build-ao29b),
#      three models, batches 1-128, act_order vs plain int4-g128 and cuBLAS
#      fp16 in one process (no --check here: checks are step 3);
#   2. the 2:4 matvec selectors, new vs old (build-sp29, build-sp29-old),
#      every plan checked (--check) and timed;
#   3. the act_order artifacts checked on the GPU (--check-only), batches
#      1,4,16 first (the sorted attention store), then 128.
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-560}))
left() { echo $((deadline - $(date +%s))); }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s31r1; rm -rf $res; mkdir -p $res/ao $res/sp-new $res/sp-old $res/chk
archive() { tar czf "$out/r1.tgz" -C /tmp s31r1; }
log() { echo "[$(date +%T)] $* ($(left) s left)"; }
for t in a b sp; do tar xJf build-s31/$t.txz; done
nvidia-smi -L > $res/gpu.txt 2>&1
b=/tmp/qb-s31
export QFUSE_GIT_COMMIT=16a1661
log build
{ cmake -G Ninja -S build-ao29a/src -B $b -DQFUSE_ENABLE_COMPILER=OFF \
    -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j"$(nproc)" --target qfuse-bench qfuse-runtime-gpu-tests; } \
  > $res/build.log 2>&1 || { tail -40 $res/build.log; archive; exit 1; }
bench=$b/bin/qfuse-bench
log "GPU tests"
QFUSE_ACT_ORDER_ARTIFACTS="$PWD/build-ao29a/src/artifacts/act-order" timeout 200 \
  $b/unittests/Runtime/qfuse-runtime-gpu-tests --gtest_filter='PermGuardsGpu*:PermGuardsNormGpu*:SiluMulPrologueGpu*:SortedOutputGpu*:SortedAttentionGpu*:SortedRotaryAttentionGpu*' \
  > $res/gpu-tests.log 2>&1; echo "gpu tests rc=$?"
grep -hE "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure" $res/gpu-tests.log | head
archive
run() { # dir resdir name args...
  local d=$1 r=$2 name=$3; shift 3
  [ "$(left)" -lt "${NEED:-25}" ] && { echo "skip $name"; printf '%s\tskipped\t-\n' "$name" >> $r/manifest.tsv; return; }
  local t0=$(date +%s)
  (cd $d && timeout $(( $(left) - 5 )) $bench "$@" --json $r/$name.json) > $r/$name.log 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> $r/manifest.tsv
  echo "$rc $name ($(( $(date +%s) - t0 )) s)"; [ $rc -ne 0 ] && grep -E "FAIL|rror" $r/$name.log | head -3
  archive
}
log "act_order timings"
for d in build-ao29a build-ao29b; do
  grep '^check-' $d/runs.txt | while read -r name args; do
    run $d $res/ao "time-${name#check-}" ${args% --check}
  done
done
python3 build-ao29a/summarize.py $res/ao > $res/ao/summary.txt 2>&1; tail -n +1 $res/ao/summary.txt | head -120
log "2:4 matvec new vs old"
for v in new old; do
  d=build-sp29; [ $v = old ] && d=build-sp29-old
  while read -r name args; do run $d $res/sp-$v $name $args; done < $d/runs.txt
  python3 $d/summarize.py $res/sp-$v > $res/sp-$v/summary.txt 2>&1; tail -30 $res/sp-$v/summary.txt
done
log "act_order checks"
for bs in 1,4,16 128; do
  for d in build-ao29a build-ao29b; do
    for a in $d/artifacts/*-ao.qfa; do
      n=$(basename $a .qfa); run $d $res/chk "chk-$n-b${bs//,/_}" --artifact artifacts/$n.qfa --batch $bs --check-only
    done
  done
done
grep -h 'checks\|FAIL' $res/chk/*.log | sort | uniq -c | head
archive; log done
