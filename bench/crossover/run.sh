#!/usr/bin/env bash
# GPU machine: the crossover round (bench/crossover/make-artifacts.sh's
# folder, through bench/zoo/run-zoo.sh), then Nsight Compute profiles of a
# few of its kernels (a profile: device counters of one launch, not the
# result of record). Writes $OUT/zoo.tgz and $OUT/ncu.tgz.
#
#   bench/crossover/run.sh [folder, default build-xover] [budget s, default 200]
set -uo pipefail
dir="${1:-build-xover}"
budget="${2:-200}"
out="${OUT:-$PWD/gpu-out}"
bash bench/zoo/run-zoo.sh "$dir" "$budget"
bench=build-gpu/bin/qfuse-bench
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
prof=/tmp/ncu; rm -rf "$prof"; mkdir -p "$prof"
[ -d "$dir/artifacts" ] || tar xzf "$dir/artifacts.tgz" -C "$dir"
# name artifact batch N K
while read -r name art m n k; do
  timeout 60 "$ncu" -k regex:qf_ -c 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    "$bench" --artifact "$dir/artifacts/$art.qfa" --batch "$m" --gemm "${m}x${n}x${k}" \
    --iterations 10 --warmup 1 > "$prof/$name.txt" 2>&1
  echo "ncu $name: rc=$? $(grep -m1 -E 'Duration' "$prof/$name.txt" | tr -s ' ')"
done <<'LIST'
q-int4-mma-b8 l8b-q-int4-g128-mma 8 4096 4096
q-nvfp4-mma-b8 l8b-q-nvfp4-mma 8 4096 4096
q-int8-mma-b8 l8b-q-int8-mma 8 4096 4096
down-int4-mma-b8 l8b-down-int4-g128-mma 8 4096 14336
kv-int4-mv-b5 l8b-kv-int4-g128-mv 5 1024 4096
kv-int4-mv-b4 l8b-kv-int4-g128-mv 4 1024 4096
LIST
tar czf "$out/ncu.tgz" -C /tmp ncu
