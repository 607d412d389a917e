#!/usr/bin/env bash
# Session 35's first device call. Carry ["build-s35c", "build-s34"]: par.txz (made by
#   python3 bench/mma-parallel/make-sweep.py build build-s35/par
# then  tar cJf build-s35c/par.txz -C build-s35 par ), vendor.tgz.
# 1. the mma.sync tilings past the compiler's list at batches 32, 64 and
#    128 on Llama-3-8B's projections (training shapes), placeholder
#    weights, beside cuBLAS fp16; every tiling checked on k_proj;
# 2. with the time left, session 34's leftovers (carry build-s34 too; see
#    bench/results/2026-12-05-h100-s34/r1.sh): the dense int4 batch-1 matvec
#    tilings, the A/B of the mma.sync copies (daeb6d1), the block_m A/B.
# Run as  BUDGET=<s> bash bench/results/2026-12-05-h100-s35/r1.sh
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-540}))
left() { echo $((deadline - $(date +%s))); }
log() { echo "[$(date +%T)] $* ($(left) s left)"; }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s35r1; rm -rf $res; mkdir -p $res/par
archive() { tar czf "$out/r1.tgz" -C /tmp s35r1; }
tar xJf build-s35c/par.txz -C build-s35c; tar xzf build-s35c/vendor.tgz
nvidia-smi -L > $res/gpu.txt 2>&1
export QFUSE_GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)+s35"
b=/tmp/qb-s35; bench=$b/bin/qfuse-bench
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
  > $res/build.log 2>&1 || { tail -30 $res/build.log; archive; exit 1; }
cp build-s35c/par/defaults.tsv build-s35c/par/COMPILE $res/par/
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
log "mma tilings past the list"
# The timing runs first (most wanted), then the checks.
grep '^par-' build-s35c/par/runs.txt > /tmp/par-tune.txt; grep '^check-' build-s35c/par/runs.txt > /tmp/par-check.txt
while read -r name args; do run build-s35c/par $res/par $name $args; done < /tmp/par-tune.txt
NEED=40; while read -r name args; do run build-s35c/par $res/par $name $args; done < /tmp/par-check.txt
python3 bench/mma-parallel/summarize.py $res/par > $res/par/table.md 2>&1; cat $res/par/table.md
log "session 34's leftovers"
[ -d build-s34 ] && [ "$(left)" -gt 60 ] && {
  tar xJf build-s34/sweep.txz; tar xJf build-s34/ab.txz; tar xJf build-s34/abbm.txz
  mkdir -p $res/dense $res/ab $res/abbm
  NEED=15; while read -r name args; do run build-mv-dense $res/dense $name $args; done < build-mv-dense/runs.txt
  [ "$(left)" -gt 60 ] && QFUSE_BENCH=$bench ZOO_WORK=$res/ab bash bench/zoo/run-zoo.sh build-ab-copies $(( $(left) - 10 )) 2>&1 | tail -3
  python3 bench/wgmma-producer/ab-summary.py $res/ab 2>&1 | tail -9
  [ "$(left)" -gt 60 ] && QFUSE_BENCH=$bench ZOO_WORK=$res/abbm bash bench/zoo/run-zoo.sh build-ab-bm128 $(( $(left) - 10 )) 2>&1 | tail -3
  python3 bench/wgmma-producer/ab-summary.py $res/abbm 2>&1 | tail -9
}
archive; log done
