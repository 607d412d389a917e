#!/usr/bin/env bash
# Session 20, GPU call 3 (build-r3 carried: build-fp4's fp4.tgz and runs.txt,
# checks.tgz, vendor.tgz, rtn.tgz, tiny-llama-fp16.qfa): (1) fp4 e2m1
# decoded by its bits and NF4 from registers: zoo shapes (bench/zoo/zoo.py)
# in int4-g128, NVFP4, MXFP4, NF4 and NF4 with the shared table
# (--qf-table4-in-shared), one qfuse-bench process per shape (every plan checked
# against the C++ reference, timed against cuBLAS fp16 in the same
# process), batches 1-128, --chip=sm_90a, no tuning database; (2) the
# every-encoding sweep again (fp4 at every batch); (3) qfuse-quantize of
# main after QuantizeLoad's split: overlapped vs serial byte-identical and
# timed; act_order + static groups with its host loops on threads (module
# losses against round 2's); then the bf16 checkpoint overlapped vs serial.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r3; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r3.tgz" -C /tmp r3; }
r=build-r3
tar xzf $r/vendor.tgz; tar xzf $r/rtn.tgz; mkdir -p build-fp4; tar xzf $r/fp4.tgz -C build-fp4; cp $r/runs.txt build-fp4/
tar xzf $r/checks.tgz -C build-fp4
mkdir -p artifacts/models && cp $r/tiny-llama-fp16.qfa artifacts/models/
b=/tmp/qb3
log build
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench qfuse-quantize; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
log "fp4 runs"
while read -r name args; do
  (cd build-fp4 && timeout 120 $b/bin/qfuse-bench $args --json $res/$name.json) > $res/$name.log 2>&1
  echo "$name rc=$? $(grep -ciE 'fail' $res/$name.log) fail lines"
done < build-fp4/runs.txt
pack
log "format checks: every-encoding, formats, formats-matvec, mma-formats, mma-bf16, wgmma"
for a in every-encoding formats formats-matvec mma-formats mma-bf16 wgmma; do
  (cd build-fp4 && timeout 150 $b/bin/qfuse-bench --artifact $a.qfa --check --json $res/$a.json) > $res/$a.log 2>&1
  echo "$a rc=$? $(grep -cE 'FAIL' $res/$a.log) FAIL lines"
done; pack
log "qfuse-quantize 8 x 256"
m=/tmp/l8b; A=$PWD/build-rtn
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
Q="$b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:8 --seq-len 256 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa"
q() { # name, env..., then -- extra args
  local name=$1; shift; local envs=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  rm -rf /tmp/q-$name
  env "${envs[@]}" timeout 100 /usr/bin/time -v -o $res/$name.time $Q --out /tmp/q-$name --json $res/$name.json "$@" > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}')"; }
same() { local ok=yes; for f in /tmp/q-$1/*.safetensors /tmp/q-$1/*.json; do cmp "$f" /tmp/q-$2/"$(basename "$f")" >> $res/cmp.txt 2>&1 || ok=no; done
  ls /tmp/q-$1/*.safetensors > /dev/null 2>&1 || ok="no output"; echo "$1 vs $2: identical=$ok" | tee -a $res/cmp.txt; }
q o1 X=1 --; q o2 X=1 --; q serial QFUSE_LOAD_OVERLAP=0 --; same o1 serial; same o1 o2; rm -rf /tmp/q-o2 /tmp/q-serial; pack
log "act_order + static groups (host loops now on threads; losses against round 2's)"
q ao X=1 -- --act-order --static-groups; rm -rf /tmp/q-ao; pack
log "bf16 checkpoint"
rm -rf $m/*.safetensors $m/*.json
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m bf16 > $res/checkpoint-bf16.log 2>&1; tail -1 $res/checkpoint-bf16.log
cp $A/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
q b1 X=1 --; q b0 QFUSE_LOAD_OVERLAP=0 --; same b1 b0
log done; pack
