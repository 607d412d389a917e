#!/usr/bin/env bash
# Session 42, one device call. Carry ["build-s57p"] (git-ignored):
# 1. The Llama-3-8B decode step as a model wires it (issue 18's step target),
#    int4-g128 and NF4 at batches 1, 16, 64, 128, the default compile for an
#    H100/H200, placeholder codes, against cuBLAS fp16's GEMMs of the same
#    shapes in the same process (build-s57p/steps, made by
#      for enc in int4-g128 nf4; do for b in 1 16 64 128; do
#        python3 bench/decode_step_ir.py --model llama3-8b --encoding $enc \
#          --batch $b --full-step --as-model -o s.mlir &&
#        build/bin/qfuse-compile --chip=sm_90a s.mlir -o l8b-$enc-b$b.qfa
#      done; done).
# 2. Nsight Compute profiles of the default tensor-core kernel (a profile,
#    not a result of record): int4-g128 and NF4 4096 x 4096 at M = 16 and
#    64, from
#      qfuse-compile test/Tools/qfuse-compile/Inputs/one-matmul-4096.mlir \
#        --chip=sm_90a --batch-sizes=4,16,32,64 -o build-s57p/int4.qfa
#    (nf4.qfa: the same input with "nf4, group = 64, scale = f32"), and the
#    same artifacts timed (and checked) outside ncu.
# Writes $OUT/prof.tgz.
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"; res=/tmp/prof; rm -rf $res; mkdir -p $res $out
pack() { tar czf $out/prof.tgz -C /tmp prof; }
tar xzf build-s57p/vendor.tgz
b=build-gpu
if [ ! -x $b/bin/qfuse-bench ]; then
  { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 ||
    { tail -30 $res/build.log; pack; exit 1; }
fi
nvidia-smi -L > $res/gpu.txt
for enc in int4-g128 nf4; do
  for m in 1 16 64 128; do
    n=l8b-$enc-b$m
    timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m \
      --artifact build-s57p/steps/$n.qfa --placeholder-weights \
      --json $res/$n.json > $res/$n.log 2>&1
    echo "step $n rc=$? $(grep -iE 'speedup' $res/$n.log | tail -1)"
  done
done
pack
for f in int4 nf4; do
  $b/bin/qfuse-bench --artifact build-s57p/$f.qfa --batch 4,16,32,64 --gemm 4x4096x4096 \
    --gemm 16x4096x4096 --gemm 32x4096x4096 --gemm 64x4096x4096 --check \
    --json $res/bench-$f.json > $res/bench-$f.log 2>&1
  echo "bench $f rc=$?"
done
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for f in int4 nf4; do
  for m in 16 64; do
    n=$f-m$m
    timeout 90 $ncu -k regex:qf_mma -c 1 --set full --import-source no -o $res/$n -f \
      $b/bin/qfuse-bench --artifact build-s57p/$f.qfa --batch $m --gemm ${m}x4096x4096 \
      --iterations 10 --warmup 1 > $res/$n.log 2>&1
    $ncu -i $res/$n.ncu-rep --page details > $res/$n.txt 2>&1
    $ncu -i $res/$n.ncu-rep --page source --print-source sass --csv > $res/$n-sass.csv 2>&1
    echo "$n: $(grep -m1 Duration $res/$n.txt | tr -s ' ')"
  done
done
pack
