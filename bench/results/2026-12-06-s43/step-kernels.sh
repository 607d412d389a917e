#!/usr/bin/env bash
# Prepared in session 43 (a profile, not a result of record): where the
# Llama-3-8B step's time goes at batches 16, 64 and 128, kernel by kernel,
# for qfuse (int4-g128 and NF4, main's compiler of 6b9471e, default
# compile for sm_90a) and for cuBLAS fp16's 225 GEMMs in the same process:
# which projections hold the step below issue 18's 2.0x / 1.5x at 64 / 128.
# Nsight Systems' GPU kernel summary per run (nsys stats
# cuda_gpu_kern_sum); without nsys, Nsight Compute's duration metric per
# launch. Carry ["build-s72"] (git-ignored), made by
#   for enc in int4-g128 nf4; do for b in 16 64 128; do
#     python3 bench/decode_step_ir.py --model llama3-8b --encoding $enc \
#       --batch $b --full-step --as-model -o s.mlir &&
#     build/bin/qfuse-compile --chip=sm_90a s.mlir -o build-s72/steps/l8b-$enc-b$b.qfa
#   done; done
#   cp build-s61/vendor.tgz build-s72/
# Writes $OUT/step-kernels.tgz. About 150 s.
set -uo pipefail
. bench/round-lib.sh
res=/tmp/stepk
round_start $res step-kernels.tgz 560
tar xzf build-s72/vendor.tgz
round_build_bench || exit 1
b=$round_bench
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for enc in int4-g128 nf4; do
  for m in 16 64 128; do
    n=l8b-$enc-b$m
    run=($b --model llama3-8b --batch $m --artifact build-s72/steps/$n.qfa
         --placeholder-weights --iterations 10 --warmup 1)
    if [ -n "$nsys" ]; then
      timeout 120 $nsys profile -o $res/$n -f true "${run[@]}" > $res/$n.log 2>&1
      $nsys stats --report cuda_gpu_kern_sum --format csv -o $res/$n $res/$n.nsys-rep > /dev/null 2>&1
      rm -f $res/$n.nsys-rep $res/$n.sqlite
    else
      timeout 240 $ncu -c 800 --metrics gpu__time_duration.sum --csv "${run[@]}" > $res/$n.csv 2> $res/$n.log
    fi
    echo "$n rc=$? $(ls $res | grep -c "^$n")"
    round_archive
  done
done
