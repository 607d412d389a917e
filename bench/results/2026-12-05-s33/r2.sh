#!/usr/bin/env bash
# Session 33: the wgmma kernel without its 152-byte spill, on the GPU
# (wgmma is not simulated, docs/gpu-sim.md). Carry ["build-s33"]: chk.txz
# (build-wgchk, build-ab-spill-*) and vendor.tgz. Made with
#   for f in formats mma-odd mma-fused fused-ops; do
#     build/bin/qfuse-compile test/Tools/qfuse-compile/Inputs/$f.mlir \
#       --chip=sm_90a --batch-sizes=128,200,512 -o build-wgchk/artifacts/$f.qfa; done
#   SH="l8b-gate 14336 4096 / l8b-down 4096 14336 / q7b-gate 18944 3584 /
#       z-s8960x1536 8960 1536" (one shape a line)
#   for e in int4:'int4, group = 128, scale = f16' nf4:'nf4, group = 64, scale = f32'; do
#     COMPILER_B=<qfuse-compile of c3f3278> CHIP=sm_90a BATCHES=384,512 \
#       ENC="${e#*:}" SHAPES="$SH" bench/wgmma-producer/make-ab.sh build build-ab-spill-${e%%:*}; done
# from the working tree over c3f3278 (its two TensorCore changes: the
# activation copies' one address a thread, the wgmma stores' one address a
# row of sums). Runs, most wanted first:
#   1. every plan of four lit inputs at 128, 200 and 512 on sm_90a checked
#      against the C++ reference (--check-only): the wgmma epilogue with
#      whole (512) and partial (200) blocks of rows, bias, residual,
#      silu_mul, odd N and K;
#   2. the A/B (-a this tree, -b c3f3278), default compiles, int4-g128 and
#      NF4 at 384 and 512, every plan checked and timed against cuBLAS fp16
#      in its process (bench/zoo/run-zoo.sh).
# Run as  BUDGET=<s> bash bench/results/2026-12-05-s33/r2.sh
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-520}))
left() { echo $((deadline - $(date +%s))); }
log() { echo "[$(date +%T)] $* ($(left) s left)"; }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s33r2; rm -rf $res; mkdir -p $res/chk
archive() { tar czf "$out/r2.tgz" -C /tmp s33r2; }
tar xJf build-s33/chk.txz; tar xzf build-s33/vendor.tgz
for d in build-wgchk build-ab-spill-*; do [ -f $d/artifacts.tgz ] && tar xzf $d/artifacts.tgz -C $d; done
nvidia-smi -L > $res/gpu.txt 2>&1
export QFUSE_GIT_COMMIT="$(cat build-wgchk/COMMIT)+wgmma-spill"
b=/tmp/qb-s33; bench=$b/bin/qfuse-bench
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
  > $res/build.log 2>&1 || { tail -30 $res/build.log; archive; exit 1; }
log "checks"
while read -r name args; do
  t0=$(date +%s)
  timeout 150 $bench $args > $res/chk/$name.log 2>&1; rc=$?
  echo "check $name rc=$rc ($(( $(date +%s) - t0 )) s)"
  grep -iE "FAIL|mismatch|error" $res/chk/$name.log | head -5; tail -3 $res/chk/$name.log
  archive
done < build-wgchk/runs.txt
log "A/B"
sets="build-ab-spill-int4 build-ab-spill-nf4"; todo=2
for d in $sets; do
  n=${d#build-ab-}; mkdir -p $res/$n
  share=$(( ($(left) - 10) / todo )); todo=$((todo - 1)); [ $share -gt 30 ] || break
  QFUSE_BENCH=$bench ZOO_WORK=$res/$n bash bench/zoo/run-zoo.sh $d $share 2>&1 | tail -12
  archive
done
python3 bench/wgmma-producer/ab-summary.py $res 2>&1 | tail -30
archive; log done
