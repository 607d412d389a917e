#!/usr/bin/env bash
# Session 43: the Llama-3-8B step (issue 18's step target) with the split-K
# sums shared out (65e30cf) against main before it (a5b2f39), on one card
# in one call, each run twice in the order old, new, old, new. Carry
# ["build-s65"] (git-ignored), made by
#   for enc in int4-g128 nf4; do for b in 1 16 64 128; do
#     python3 bench/decode_step_ir.py --model llama3-8b --encoding $enc \
#       --batch $b --full-step --as-model -o s.mlir &&
#     build/bin/qfuse-compile --chip=sm_90a s.mlir -o build-s65/steps/l8b-$enc-b$b.qfa
#   done; done
#   cp build-s61/steps/*.qfa build-s65/old/      # a5b2f39's, as next2.sh ran them
#   cp build-s61/vendor.tgz build-s65/
# Placeholder codes (not checked: the zoo A/B checks every kernel), against
# cuBLAS fp16's 225 GEMMs in the same process.
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"; res=/tmp/s43st; rm -rf $res; mkdir -p $res $out
pack() { tar czf $out/steps.tgz -C /tmp s43st; }
tar xzf build-s65/vendor.tgz
b=build-gpu
if [ ! -x $b/bin/qfuse-bench ]; then
  { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build $b -j16 --target qfuse-bench; } > $res/build.log 2>&1 ||
    { tail -30 $res/build.log; pack; exit 1; }
fi
nvidia-smi -L > $res/gpu.txt
for rep in 1 2; do
  for enc in int4-g128 nf4; do
    for m in 1 16 64 128; do
      for side in old steps; do
        n=l8b-$enc-b$m
        timeout 60 $b/bin/qfuse-bench --model llama3-8b --batch $m \
          --artifact build-s65/$side/$n.qfa --placeholder-weights \
          --json $res/$n-$side-$rep.json > $res/$n-$side-$rep.log 2>&1
        echo "$n $side $rep rc=$? $(grep -iE 'speedup' $res/$n-$side-$rep.log | tail -1)"
      done
    done
  done
done
pack
