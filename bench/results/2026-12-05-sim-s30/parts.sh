#!/bin/bash
# the act_order parts of round1.sh, checked on qfuse-sim at batches 1, 16, 128
ROOT=${ROOT:-$PWD}
cd $ROOT/build-sim30
B=$ROOT/build/bin/qfuse-bench
export LD_LIBRARY_PATH=$ROOT/build/sim/lib
for part in attno qkvn; do
  for a in ao aop int4; do
    /usr/bin/time -f "%e s" $B --artifact artifacts/llama3-8b-$part-$a.qfa --batch 1,16,128 --check-only > /tmp/simpart-$part-$a.log 2>&1
    echo "$part-$a rc=$? ok=$(grep -c ' ok$' /tmp/simpart-$part-$a.log) fail=$(grep -c FAIL /tmp/simpart-$part-$a.log) $(tail -1 /tmp/simpart-$part-$a.log)"
  done
  /usr/bin/time -f "%e s" $B --artifact artifacts/llama3-8b-$part-ao.qfa --batch 1,16,128 --check-only --distinct-perms > /tmp/simpart-$part-fallback.log 2>&1
  echo "$part-fallback rc=$? ok=$(grep -c ' ok$' /tmp/simpart-$part-fallback.log) fail=$(grep -c FAIL /tmp/simpart-$part-fallback.log) $(tail -1 /tmp/simpart-$part-fallback.log)"
done
