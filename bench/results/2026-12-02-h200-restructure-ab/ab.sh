#!/usr/bin/env bash
# A/B of the runtime before (f4e01d1) and after the restructure on the same
# artifacts (the PTX is byte-identical), plus the new tree's unit/GPU tests.
set -u
root=$PWD; out=${OUT:-$root/gpu-out}; mkdir -p $out/results
tar xzf .devcarry/restructure/artifacts.tgz
nvidia-smi -L
for v in old new; do
  src=$root; [ $v = old ] && src=$root/.devcarry/restructure/old
  ut=OFF; [ $v = new ] && ut=ON
  cmake -G Ninja -S $src -B /tmp/b-$v -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_ENABLE_UNITTESTS=$ut -DQFUSE_TOKENIZER_ORACLE=OFF \
    -DCMAKE_BUILD_TYPE=Release -DQFUSE_THIRD_PARTY_DIR=$root/build-vendor > $out/cfg-$v.log 2>&1 || { tail $out/cfg-$v.log; exit 1; }
  t=qfuse-bench; [ $v = new ] && t=all
  cmake --build /tmp/b-$v -j16 --target $t > $out/build-$v.log 2>&1 || { tail -30 $out/build-$v.log; exit 1; }
done
(cd /tmp/b-new && ctest -L 'unit|gpu' --output-on-failure > $out/ctest-new.log 2>&1; tail -3 $out/ctest-new.log)
grep -E "tests passed|tests failed|Failed" $out/ctest-new.log | tail -5
while read -r name args; do
  case $name in *shapes*|*step*) ;; *) continue;; esac
  for v in new old; do
    /tmp/b-$v/bin/qfuse-bench $args --json $out/results/$name-$v.json > $out/results/$name-$v.log 2>&1 || echo "FAILED $name $v"
    printf '%-40s %s ' $name $v; grep -E "median|ratio|speedup|PASS|FAIL" $out/results/$name-$v.log | tail -2 | tr '\n' ' '; echo
  done
done < artifacts/runs.txt
cd $out && tar czf $out/restructure-ab.tgz results *.log
