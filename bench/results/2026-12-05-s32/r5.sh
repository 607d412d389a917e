#!/usr/bin/env bash
# Prepared in session 32 (no device machine was lent): issue 18, batches
# 24-128. Carry ["build-s32"] (ab.txz, vendor.tgz of /work/main/build-s32);
# run after bench/results/2026-12-05-h200-s31/r4.sh if both fit, whose
# runtime build it reuses (same runtime sources). Most wanted first:
#   1. the split-K / cluster sums as 16-byte quads (commit in
#      build-ab-*/COMMIT, `-a`) against 903038b, before it (`-b`), default
#      compiles (--chip=sm_90a, no tuning database) of training shapes
#      (Llama-3-8B q/kv/down, Qwen2.5-7B q/down) and zoo shapes (s2048x11008,
#      s8192x2048, s1024x8192), int4-g128 and NVFP4, batches 24-128; and
#      gate/up with silu_mul on sm_90 (qfuse-compile's default chip) at
#      128-384, where the mma.sync kernel of block_m 128 now reads each gate
#      sum where it stores it (3b89391; it spilled before): training
#      14336x4096, 18944x3584 and zoo 11008x4096, 13824x5120 (build-ab-gated,
#      the cuBLAS column one gate GEMM); every plan checked (--check) and
#      timed against cuBLAS fp16 in its process (bench/zoo/run-zoo.sh);
#   2. a profile (ncu, not the result of record) toward why more warps an
#      SM do not make batches 32-64 faster (session 26's sweep: 1024-2048
#      warps no faster than 512): the stall reasons (per issued
#      instruction) of the default at M = 32 and 64, new and old sums.
# Made with
#   for e in int4:'int4, group = 128, scale = f16' nvfp4:'fp4e2m1, group = 16, scale = f8E4M3FN, global_scale'; do
#     COMPILER_B=/tmp/qfuse-compile-old BATCHES=24,32,48,64,96,128 ENC="${e#*:}" SHAPES="$SHAPES" \
#       bench/wgmma-producer/make-ab.sh build build-ab-${e%%:*}; done
# with /tmp/qfuse-compile-old built at 903038b (the commit before the quads)
# and SHAPES the eight lines "name N K" of the README.
#   COMPILER_B=/tmp/qfuse-compile-old CHIP=sm_90 BATCHES=128,256,384 SHAPES="$GATED" \
#     bench/wgmma-producer/make-ab.sh build build-ab-gated
#   tar cJf build-s32/ab.txz build-ab-*; tar czf build-s32/vendor.tgz build-vendor
# Run as  BUDGET=<s> [AB_SETS='build-ab-int4 ...'] bash bench/results/2026-12-05-s32/r5.sh
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-400}))
left() { echo $((deadline - $(date +%s))); }
log() { echo "[$(date +%T)] $* ($(left) s left)"; }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s32r5; rm -rf $res; mkdir -p $res
archive() { tar czf "$out/r5.tgz" -C /tmp s32r5; }
tar xJf build-s32/ab.txz
for d in build-ab-*; do tar xzf $d/artifacts.tgz -C $d; done
nvidia-smi -L > $res/gpu.txt 2>&1
bench=/tmp/qb-r4/bin/qfuse-bench
if [ ! -x $bench ]; then
  tar xzf build-s32/vendor.tgz
  bench=/tmp/qb-r5/bin/qfuse-bench
  log build
  { cmake -G Ninja -S . -B /tmp/qb-r5 -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
      -DCMAKE_BUILD_TYPE=Release &&
    cmake --build /tmp/qb-r5 -j"$(nproc)" --target qfuse-bench; } > $res/build.log 2>&1 \
    || { tail -30 $res/build.log; archive; exit 1; }
fi
log "A/B of the quad sums"
sets="${AB_SETS:-build-ab-int4 build-ab-gated build-ab-nvfp4}"
todo=$(echo $sets | wc -w)
for d in $sets; do
  n=${d#build-ab-}; mkdir -p $res/$n
  share=$(( ($(left) - 120) / todo )); todo=$((todo - 1)); [ $share -gt 30 ] || break
  QFUSE_BENCH=$bench ZOO_WORK=$res/$n bash bench/zoo/run-zoo.sh $d $share 2>&1 | tail -30
  archive
done
log ncu
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
mkdir -p $res/ncu
while read -r name m n k; do
  [ "$(left)" -gt 40 ] || break
  a=build-ab-int4/artifacts/$name.qfa
  timeout 60 "$ncu" -k regex:qf_ -c 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    $bench --artifact $a --batch "$m" --gemm "${m}x${n}x${k}" \
    --iterations 10 --warmup 1 > "$res/ncu/$name-b$m.txt" 2>&1
  echo "ncu $name b$m: rc=$? $(grep -m1 -E 'Duration' "$res/ncu/$name-b$m.txt" | tr -s ' ')"
  archive
done <<'LIST'
l8b-down-a 64 4096 14336
l8b-down-b 64 4096 14336
l8b-q-a 32 4096 4096
l8b-q-a 64 4096 4096
LIST
archive; log done
