#!/usr/bin/env bash
# Prepared in session 35 for the next device call (issue 20, not run yet).
# Carry ["build-s36", "build-s34"]: build-s36/short.txz made by
#   SHAPES="1024x4096 512x3584 1024x3584 512x4096" ENCS=sp-int4 CHECK=1 \
#   EXTRA='matvec, block_n = 4, split_k = 4; matvec, block_n = 4, split_k = 2;
#     matvec, block_n = 2, split_k = 4' \
#     python3 bench/sparse24/make-matvec-sweep.py build build-s36/short
#   tar cJf build-s36/short.txz -C build-s36 short
# (at a372e0d's compiler), build-s36/vendor.tgz; build-s34/sweep.txz as
# session 34 made it (bench/results/2026-12-05-h100-s34/r1.sh).
# 1. the 2:4 + int4 batch-1 matvec on short training weights (1024 and 512
#    rows), every listed tiling plus EXTRA, checked, beside dense int4 and
#    cuBLAS fp16: is 4 rows split 4 ways (n4u1s4, fastest on the zoo's
#    1024- and 896-row weights) the rule for short weights?
# 2. the four largest zoo shapes of session 34's 2:4 sweep (test shapes);
# 3. the A/B of --grid-dependency-prefetch (3cf85ea: the tensor-core
#    kernel's first weights asked of L2 before its wait; the matvec's too),
#    build-s36/ab-pf made by
#      FLAGS_B=--grid-dependency-prefetch BATCHES=1,4,16,32,64,128 CHIP=sm_90a \
#        bench/wgmma-producer/make-ab.sh build build-s36/ab-pf
#    (-a default, -b with the flag; training shapes, checked).
# Both time with one graph for all weight copies (qfuse-bench since 756ca12).
# Run as  BUDGET=<s> bash bench/results/2026-12-05-h100-s35/r4.sh
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-540}))
left() { echo $((deadline - $(date +%s))); }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s35r4; rm -rf $res; mkdir -p $res/short $res/spzoo
archive() { tar czf "$out/r4.tgz" -C /tmp s35r4; }
tar xJf build-s36/short.txz -C build-s36; tar xzf build-s36/vendor.tgz
tar xJf build-s34/sweep.txz build-sp-zoo
nvidia-smi -L > $res/gpu.txt 2>&1
export QFUSE_GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)+s35r4"
b=/tmp/qb-s35; bench=$b/bin/qfuse-bench
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
  > $res/build.log 2>&1 || { tail -30 $res/build.log; archive; exit 1; }
run() { # dir resdir name args...
  local d=$1 r=$2 name=$3; shift 3
  [ "$(left)" -lt 25 ] && { echo "skip $name"; return; }
  local t0=$(date +%s)
  (cd $d && timeout $(( $(left) - 5 )) $bench "$@" --json $r/$name.json) > $r/$name.log 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> $r/manifest.tsv
  echo "$rc $name ($(( $(date +%s) - t0 )) s)"; [ $rc -ne 0 ] && grep -E "FAIL|rror" $r/$name.log | head -3
  archive
}
while read -r name args; do run build-s36/short $res/short $name $args; done < build-s36/short/runs.txt
grep -E "^sweep-sp-(int4|f16)-(2048x11008|14336x5120|4544x18176|5120x27648) " \
  build-sp-zoo/runs.txt > /tmp/spzoo-big.txt
while read -r name args; do run build-sp-zoo $res/spzoo $name $args; done < /tmp/spzoo-big.txt
grep -h "rel err" $res/*/*.log | grep -vc " ok" | sed 's/^/checks not ok: /'
mkdir -p $res/abpf
[ "$(left)" -gt 60 ] && QFUSE_BENCH=$bench ZOO_WORK=$res/abpf bash bench/zoo/run-zoo.sh build-s36/ab-pf $(( $(left) - 10 )) 2>&1 | tail -3
python3 bench/wgmma-producer/ab-summary.py $res/abpf 2>&1 | tail -9
archive
