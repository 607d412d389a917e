#!/usr/bin/env bash
# Prepared in session 31 for the next device call (the device was paused
# after call 2). Carry ["build-s31"]: ao31.txz, sweep.txz, tb.txz of
# /work/main/build-s31. Built from main at the commit in build-ao31/COMMIT
# (plans timed on defined inputs, bench::fillPlanInputs), then, most wanted
# first, while the deadline allows:
#   1. SortedAttentionGpu / SortedRotaryAttentionGpu (batches 1, 16 and 32,
#      the tiled kernel's sorted store) and BenchInputsGpu;
#   2. `attno` (rotary attention + o_proj) of three models, batches 1-128:
#      ao (default), aop (permute launch), aot (--sorted-attention-max-batch
#      =4096: the tiled kernel stores o_proj's input sorted from 32) and
#      plain int4-g128, timed in one process (call 1's attno times are
#      void); then aot checked (--check-only) at 32 and 128;
#   3. a profile: every batch-1 matvec tiling of 2:4 + int4 on three
#      bench/sparse24 shapes, placeholder weights
#      (bench/sparse24/make-matvec-sweep.py build build-sp-sweep);
#   4. the zoo runs of call 2 (the mma tie-break A/B) its budget left out.
# Made with
#   PARTS=attno AO_EXTRA="t:--sorted-attention-max-batch=4096" \
#   MODELS="qwen2.5-7b:3584:512:18944 qwen2.5-14b:5120:1024:13824 llama3-8b:4096:1024:14336" \
#     bench/act-order/make-artifacts.sh build build-ao31
#   tar cJf build-s31/ao31.txz build-ao31; tar cJf build-s31/sweep.txz build-sp-sweep
# (build-ao31/COMMIT: f2f3cb6)
# Run as  BUDGET=<s> bash bench/results/2026-12-05-h200-s31/r4.sh
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-500}))
left() { echo $((deadline - $(date +%s))); }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s31r4; rm -rf $res; mkdir -p $res/ao $res/chk $res/sweep
archive() { tar czf "$out/r4.tgz" -C /tmp s31r4; }
log() { echo "[$(date +%T)] $* ($(left) s left)"; }
for t in ao31 tb sweep; do [ -f build-s31/$t.txz ] && tar xJf build-s31/$t.txz; done
nvidia-smi -L > $res/gpu.txt 2>&1
export QFUSE_GIT_COMMIT="$(cat build-ao31/COMMIT)"
b=/tmp/qb-r4
# Snapshots made before make-artifacts.sh archived sim/ lack it (CMakeLists needs it).
[ -d build-ao31/src/sim ] || cp -r sim build-ao31/src/
log build
{ cmake -G Ninja -S build-ao31/src -B $b -DQFUSE_ENABLE_COMPILER=OFF \
    -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j"$(nproc)" --target qfuse-bench qfuse-runtime-gpu-tests; } \
  > $res/build.log 2>&1 || { tail -40 $res/build.log; archive; exit 1; }
bench=$b/bin/qfuse-bench
log "GPU tests"
QFUSE_ACT_ORDER_ARTIFACTS="$PWD/build-ao31/src/artifacts/act-order" timeout 120 \
  $b/unittests/Runtime/qfuse-runtime-gpu-tests --gtest_filter='SortedAttentionGpu*:SortedRotaryAttentionGpu*:BenchInputsGpu*' \
  > $res/gpu-tests.log 2>&1; echo "gpu tests rc=$?"
grep -hE "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure" $res/gpu-tests.log | head
archive
run() { # dir resdir name args...
  local d=$1 r=$2 name=$3; shift 3
  [ "$(left)" -lt "${NEED:-25}" ] && { echo "skip $name"; return; }
  local t0=$(date +%s)
  (cd $d && timeout $(( $(left) - 5 )) $bench "$@" --json $r/$name.json) > $r/$name.log 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> $r/manifest.tsv
  echo "$rc $name ($(( $(date +%s) - t0 )) s)"; [ $rc -ne 0 ] && grep -E "FAIL|rror" $r/$name.log | head -3
  archive
}
log "attno timings"
grep '^check-' build-ao31/runs.txt | while read -r name args; do
  run build-ao31 $res/ao "time-${name#check-}" ${args% --check}
done
python3 build-ao31/summarize.py $res/ao > $res/ao/summary.txt 2>&1; head -120 $res/ao/summary.txt
for a in build-ao31/artifacts/*-aot.qfa; do
  n=$(basename $a .qfa); run build-ao31 $res/chk "chk-$n" --artifact artifacts/$n.qfa --batch 32,128 --check-only
done
log "2:4 matvec tilings at batch 1"
while read -r name args; do
  run build-sp-sweep $res/sweep $name $args
done < build-sp-sweep/runs.txt
[ -d build-tb29 ] || { archive; log "done (no build-tb29: the zoo runs left from call 2 are not carried)"; exit 0; }
log "zoo runs left from call 2"
grep -v -x -F -f bench/results/2026-12-05-h200-s31/r2-done.txt <(cut -d' ' -f1 build-tb29/runs.txt) > $res/todo.txt
awk 'NR==FNR {want[$1]=1; next} ($1 in want)' $res/todo.txt build-tb29/runs.txt > $res/runs-left.txt
cp $res/runs-left.txt build-tb29/runs.txt
[ "$(left)" -gt 40 ] && QFUSE_BENCH=$bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh build-tb29 $(( $(left) - 10 )) 2>&1 | tail -25
archive; log done
