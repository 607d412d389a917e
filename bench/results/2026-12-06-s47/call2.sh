#!/usr/bin/env bash
# Session 47, device call 2: issue 18's zoo round of record and the
# Llama-3-8B step, both compiled by main at a152648 (dense block_m 32 at
# 33-64 rows), the default compile for sm_90a, no tuning database.
# Carry ["build-s69", "build-s85"] (git-ignored), made by
#   CHIP=sm_90a JOBS=2 bench/zoo/make-zoo-artifacts.sh build bench/zoo/plan.json build-s69/zoo
#   for enc in int4-g128 nf4; do for b in 1 16 64 128; do
#     python3 bench/decode_step_ir.py --model llama3-8b --encoding $enc \
#       --batch $b --full-step --as-model -o s.mlir &&
#     build/bin/qfuse-compile --chip=sm_90a s.mlir -o build-s85/steps/l8b-$enc-b$b.qfa
#   done; done
#   cp build-s61/vendor.tgz build-s69/; (cd build-s85 && tar cJf steps.txz steps && rm -rf steps)
# The step runs placeholder weights (not checked) against cuBLAS fp16's
# 225 GEMMs in the same process, as session 43's steps/.
# Run as  BUDGET=480 bash bench/results/2026-12-06-s47/call2.sh   (timeout_s 595)
set -uo pipefail
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
tar xzf build-s69/vendor.tgz
ZOO_WORK=/tmp/s47zoo bash bench/zoo/run-zoo.sh build-s69/zoo "${BUDGET:-480}" | tail -4
[ -f "$out/zoo.tgz" ] && mv "$out/zoo.tgz" "$out/round.tgz"
res=/tmp/s47steps; rm -rf $res; mkdir -p $res
tar xJf build-s85/steps.txz -C build-s85
nvidia-smi -L > $res/gpu.txt
for enc in int4-g128 nf4; do
  for m in 1 16 64 128; do
    n=l8b-$enc-b$m
    timeout 40 build-gpu/bin/qfuse-bench --model llama3-8b --batch $m \
      --artifact build-s85/steps/$n.qfa --placeholder-weights \
      --json $res/$n.json > $res/$n.log 2>&1
    echo "step $n rc=$? $(grep -m1 -i 'speedup\|x cuBLAS\|ratio' $res/$n.log)"
  done
done
tar czf "$out/steps.tgz" -C /tmp s47steps
