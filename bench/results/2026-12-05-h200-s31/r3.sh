#!/usr/bin/env bash
# Session 31, call 3 (carry ["build-s31"]): qfuse-bench of main at f2d8a28
# (plans timed on defined inputs: activations 1.0, positions 0), built
# here from this tree, then
#   1. `attno` (rotary attention + o_proj) of the three models timed again:
#      call 1's attno times followed whatever device memory held (the
#      positions input was never written), so they are void;
#   2. a profile: every batch-1 matvec tiling of 2:4 + int4 on three
#      bench/sparse24 shapes, placeholder weights
#      (bench/sparse24/make-matvec-sweep.py build build-sp-sweep);
#   3. the zoo runs of call 2 (the mma tie-break A/B) that its budget left
#      out (r2-done.txt lists the ones that ran).
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-500}))
left() { echo $((deadline - $(date +%s))); }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s31r3; rm -rf $res; mkdir -p $res/ao
archive() { tar czf "$out/r3.tgz" -C /tmp s31r3; }
log() { echo "[$(date +%T)] $* ($(left) s left)"; }
tar xJf build-s31/a.txz; tar xJf build-s31/tb.txz; tar xJf build-s31/sweep.txz; tar xzf build-s31/vendor.tgz
export QFUSE_GIT_COMMIT=f2d8a28
b=/tmp/qb-r3
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j"$(nproc)" --target qfuse-bench; } > $res/build.log 2>&1 \
  || { tail -30 $res/build.log; archive; exit 1; }
bench=$b/bin/qfuse-bench
log "attno timings"
grep '^check-.*attno' build-ao29a/runs.txt | while read -r name args; do
  n="time-${name#check-}"
  (cd build-ao29a && timeout 120 $bench ${args% --check} --json $res/ao/$n.json) > $res/ao/$n.log 2>&1
  echo "$? $n"; archive
done
python3 build-ao29a/summarize.py $res/ao > $res/ao/summary.txt 2>&1; grep -v '| aop |' $res/ao/summary.txt | head -40
log "2:4 matvec tilings at batch 1"
mkdir -p $res/sweep
while read -r name args; do
  [ "$(left)" -lt 40 ] && break
  (cd build-sp-sweep && timeout 60 $bench $args --json $res/sweep/$name.json) > $res/sweep/$name.log 2>&1
  echo "$? $name"; grep -E '^plan' $res/sweep/$name.log | cut -c1-120 | head -12; archive
done < build-sp-sweep/runs.txt
log "zoo runs left from call 2"
grep -v -x -F -f bench/results/2026-12-05-h200-s31/r2-done.txt <(cut -d' ' -f1 build-tb29/runs.txt) > $res/todo.txt
awk 'NR==FNR {want[$1]=1; next} ($1 in want)' $res/todo.txt build-tb29/runs.txt > $res/runs-left.txt
cp $res/runs-left.txt build-tb29/runs.txt
wc -l < build-tb29/runs.txt
QFUSE_BENCH=$bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh build-tb29 $(( $(left) - 10 )) 2>&1 | tail -25
archive; log done
