#!/usr/bin/env bash
# Prepared in session 43 (a profile, not a result of record): Nsight Compute
# on the default tensor-core kernel of main's compiler of 6b9471e (the
# split-K sums shared by the k groups, activation copies of passes under 8
# rows), int4-g128 and NF4 4096 x 4096 at M = 16 and 64, as session 42's
# prof.sh part 2 (bench/results/2026-12-06-s42/prof) profiled the kernels
# before them; the same artifacts timed and checked outside ncu first.
# Carry ["build-s70"] (git-ignored), made by
#   qfuse-compile test/Tools/qfuse-compile/Inputs/one-matmul-4096.mlir \
#     --chip=sm_90a --batch-sizes=4,16,32,64 -o build-s70/int4.qfa
#   (nf4.qfa: the same input with "nf4, group = 64, scale = f32")
#   cp build-s61/vendor.tgz build-s70/
# Writes $OUT/prof.tgz.
set -uo pipefail
. bench/round-lib.sh
res=/tmp/prof
round_start $res prof.tgz 560
tar xzf build-s70/vendor.tgz
round_build_bench || exit 1
b=$round_bench
for f in int4 nf4; do
  $b --artifact build-s70/$f.qfa --batch 4,16,32,64 --gemm 4x4096x4096 \
    --gemm 16x4096x4096 --gemm 32x4096x4096 --gemm 64x4096x4096 --check \
    --json $res/bench-$f.json > $res/bench-$f.log 2>&1
  echo "bench $f rc=$?"
done
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for f in int4 nf4; do
  for m in 16 64; do
    n=$f-m$m
    timeout 90 $ncu -k regex:qf_mma -c 1 --set full --import-source no -o $res/$n -f \
      $b --artifact build-s70/$f.qfa --batch $m --gemm ${m}x4096x4096 \
      --iterations 10 --warmup 1 > $res/$n.log 2>&1
    $ncu -i $res/$n.ncu-rep --page details > $res/$n.txt 2>&1
    $ncu -i $res/$n.ncu-rep --page source --print-source sass --csv > $res/$n-sass.csv 2>&1
    echo "$n: $(grep -m1 Duration $res/$n.txt | tr -s ' ')"
  done
done
round_archive
