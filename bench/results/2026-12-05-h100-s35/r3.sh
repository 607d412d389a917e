#!/usr/bin/env bash
# Session 35's third device call (carry ["build-s35z"], as r2.sh): qfuse-bench
# times a plan's weight copies in one CUDA graph, as it times cuBLAS, where
# it made a graph a copy before. 1. Same process A/B of the two timings on
# ten zoo runs (five shapes x int4-g128 / NF4; timing only, the round checks
# them); 2. the zoo round again with the new timing (same artifacts as r2).
set -uo pipefail
t_start=$(date +%s); deadline=$((t_start + ${BUDGET:-540}))
left() { echo $((deadline - $(date +%s))); }
out="${OUT:-$PWD/gpu-out}"; mkdir -p "$out"
res=/tmp/s35r3; rm -rf $res; mkdir -p $res/ab
tar xzf build-s35z/vendor.tgz
xz -dc build-s35z/zoo-head/artifacts.tar.xz | tar xf - -C build-s35z/zoo-head
b=/tmp/qb-s35; bench=$b/bin/qfuse-bench
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
  > $res/build.log 2>&1 || { tail -30 $res/build.log; exit 1; }
export QFUSE_GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)+s35"
grep -E "^(s1024x8192|s2048x11008|s8192x2048|s960x2560|s2048x3584)-(int4-g128|nf4) " \
  build-s35z/zoo-head/runs.txt > $res/ab/runs.txt
while read -r name est args; do
  for mode in one gpc; do
    flag=""; [ $mode = gpc ] && flag=--graph-per-copy
    # shellcheck disable=SC2086 # (the run's arguments)
    $bench ${args/--check/} $flag --json $res/ab/$mode-$name.json > $res/ab/$mode-$name.log 2>&1
    echo "$? $mode $name"
  done
  tar czf "$out/r3.tgz" -C /tmp s35r3
done < $res/ab/runs.txt
QFUSE_BENCH=$bench ZOO_WORK=$res bash bench/zoo/run-zoo.sh build-s35z/zoo-head $(( $(left) - 15 )) | tail -3
tar czf "$out/r3.tgz" -C /tmp s35r3
