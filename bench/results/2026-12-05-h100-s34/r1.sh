#!/usr/bin/env bash
# Session 34's second device call. Carry ["build-s34"]: sweep.txz
# (build-sp-zoo, build-mv-dense), abbm.txz (build-ab-bm128), ab.txz
# (build-ab-copies), vendor.tgz. Made from the working tree over 0c892ed
# (2:4 matvec: 4 rows a warp; wgmma block_m 128 from 64 blocks) with
#   EXTRA='matvec, block_n = 4, split_k = 4; matvec, block_n = 16, split_k = 2;
#     matvec, block_n = 8, k_unroll = 2, split_k = 2; matvec, block_n = 4,
#     k_unroll = 2, split_k = 2; matvec, block_n = 8, k_unroll = 2;
#     matvec, block_n = 8, split_k = 2'
#   SHAPES="1024x3072 896x4864 1024x8192 4096x3584 5120x5120 2304x9216
#     2048x11008 14336x5120 4544x18176 5120x27648" ENCS="sp-int4 sp-f16" CHECK=1 \
#     python3 bench/sparse24/make-matvec-sweep.py build build-sp-zoo
#   SHAPES="4096x4096 4096x14336 14336x4096 1024x4096 6144x4096 28672x4096" \
#     ENCS=int4 python3 bench/sparse24/make-matvec-sweep.py build build-mv-dense
#   SHAPES=<bench/results/2026-12-05-s32/README.md's eight> BATCHES=16,32,64,128 \
#     CHIP=sm_90 COMPILER_B=<qfuse-compile of c3f3278> \
#     bench/wgmma-producer/make-ab.sh build build-ab-copies
#   SHAPES="l8b-q 4096 4096 / l8b-down 4096 14336 / q7b-q 3584 3584 /
#     q7b-down 3584 18944" (a shape a line) BATCHES=256,384,512 CHIP=sm_90a \
#     COMPILER_B=<qfuse-compile before the block_m change> \
#     bench/wgmma-producer/make-ab.sh build build-ab-bm128
#   tar cJf build-s34/sweep.txz build-sp-zoo build-mv-dense
#   tar cJf build-s34/abbm.txz build-ab-bm128
#   tar cJf build-s34/ab.txz build-ab-copies
# Runs, most wanted first:
#   1. the 2:4 batch-1 matvec on ten zoo shapes (none tuned on), sp-int4 and
#      sp-f16, every tiling the compiler lists plus EXTRA, checked (--check),
#      beside dense int4-g128 and cuBLAS fp16: does the new default (4 rows a
#      warp, K split in two where N is short) hold off the training shapes?
#   2. the A/B of wgmma block_m 128 from 64 blocks of 128 rows (-a this
#      tree, -b before), int4-g128 on training shapes at 256-512, sm_90a;
#   3. the dense int4-g128 batch-1 matvec tilings on Llama-3-8B's shapes
#      (training), placeholder weights: is 4 rows a warp better there too?
#   4. the A/B of daeb6d1's mma.sync copies (-a this tree, -b c3f3278) at
#      M = 16-128 on sm_90.
# Run as  BUDGET=<s> bash bench/results/2026-12-05-h100-s34/r1.sh
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-540}))
left() { echo $((deadline - $(date +%s))); }
log() { echo "[$(date +%T)] $* ($(left) s left)"; }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s34r1; rm -rf $res; mkdir -p $res/spzoo $res/dense
archive() { tar czf "$out/r1.tgz" -C /tmp s34r1; }
tar xJf build-s34/sweep.txz; tar xJf build-s34/ab.txz; tar xJf build-s34/abbm.txz; tar xzf build-s34/vendor.tgz
nvidia-smi -L > $res/gpu.txt 2>&1
export QFUSE_GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo 0c892ed)+s34"
b=/tmp/qb-s34; bench=$b/bin/qfuse-bench
log build
# The runtime from a snapshot of HEAD (src.tgz: git archive of runtime,
# format, sim, unittests, cmake, scripts), not the working tree in flux.
mkdir -p /tmp/src-s34 && tar xzf build-s34/src.tgz -C /tmp/src-s34 && cp -r build-vendor /tmp/src-s34/
{ cmake -G Ninja -S /tmp/src-s34 -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
  > $res/build.log 2>&1 || { tail -30 $res/build.log; archive; exit 1; }
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
log "2:4 matvec on zoo shapes"
while read -r name args; do run build-sp-zoo $res/spzoo $name $args; done < build-sp-zoo/runs.txt
grep -h "rel err" $res/spzoo/*.log | grep -vc " ok" | sed 's/^/checks not ok: /'
log "A/B of wgmma block_m 128"; mkdir -p $res/abbm
[ "$(left)" -gt 60 ] && QFUSE_BENCH=$bench ZOO_WORK=$res/abbm bash bench/zoo/run-zoo.sh build-ab-bm128 $(( $(left) - 10 )) 2>&1 | tail -4
python3 bench/wgmma-producer/ab-summary.py $res/abbm 2>&1 | tail -22
archive
log "dense matvec tilings"
NEED=15; while read -r name args; do run build-mv-dense $res/dense $name $args; done < build-mv-dense/runs.txt
log "A/B of the mma.sync copies"; mkdir -p $res/ab
[ "$(left)" -gt 60 ] && QFUSE_BENCH=$bench ZOO_WORK=$res/ab bash bench/zoo/run-zoo.sh build-ab-copies $(( $(left) - 10 )) 2>&1 | tail -4
python3 bench/wgmma-producer/ab-summary.py $res/ab 2>&1 | tail -9
archive; log done
