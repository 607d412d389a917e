#!/usr/bin/env bash
# Session 21, GPU call 2 (build-s21 carried: tune-ovl.tgz, zoo.tgz,
# wgmma-ovl.qfa, wgmma-sync.qfa, vendor.tgz, rtn.tgz). The wgmma overlap
# redone after call 1's failures (call 1 kept a step's wgmmas in flight
# across the loop's back edge, whose decode rewrote their A registers):
# now the next step decodes into fresh registers while this step's wgmmas
# run, and each step still ends with its wgmmas done.
#  - the wgmma check artifact of every format, both ways, checked;
#  - four zoo shapes compiled the default way (sm_90a, no database) both
#    ways at batches 16-512, checked, one process each;
#  - every wgmma candidate of the Llama-3-8B shapes at batches 16-256 with
#    the overlap, checked (call 1b has them without it);
#  - qfuse-quantize 8 x 256 of the fp16 checkpoint x3 (issue 19's wall time).
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r2; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r2.tgz" -C /tmp r2; }
r=build-s21; b=/tmp/qb
log build
tar xzf $r/vendor.tgz
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench qfuse-quantize; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
export QFUSE_BENCH=$b/bin/qfuse-bench
tar xzf $r/tune-ovl.tgz -C /tmp; tar xzf $r/zoo.tgz -C /tmp
for v in sync ovl; do
  timeout 150 $b/bin/qfuse-bench --artifact $r/wgmma-$v.qfa --check --json $res/wgmma-$v.json > $res/wgmma-$v.log 2>&1
  echo "wgmma-$v rc=$? $(grep -cE 'FAIL' $res/wgmma-$v.log) FAIL lines"
done
log "zoo shapes, default compile, sync vs overlap"
for s in s8192x2048 s2048x11008 s1024x8192 s2048x3584; do
  nk=${s#s}; n=${nk%x*}; k=${nk#*x}
  gemms=""; for m in 16 32 64 128 256 512; do gemms="$gemms --gemm ${m}x${n}x${k}"; done
  for v in sync ovl; do
    timeout 120 $b/bin/qfuse-bench --artifact /tmp/zoo/$s-$v.qfa --batch 16,32,64,128,256,512 $gemms --check \
      --json $res/zoo-$s-$v.json > $res/zoo-$s-$v.log 2>&1
    echo "zoo $s $v rc=$? $(grep -cE 'FAIL' $res/zoo-$s-$v.log) FAIL lines"
  done
done; pack
log "tune candidates, wgmma overlapped (checked)"
bash /tmp/tune-ovl/run.sh $res/tune-ovl 300 | tail -3; pack
log "qfuse-quantize 8 x 256, fp16 checkpoint"
tar xzf $r/rtn.tgz
m=/tmp/l8b; A=$PWD/build-rtn
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log
cp $A/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
Q="$b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:8 --seq-len 256 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa"
for name in o1 o2 o3; do
  rm -rf /tmp/q-$name
  timeout 100 /usr/bin/time -v -o $res/$name.time $Q --out /tmp/q-$name --json $res/$name.json > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}')"
done
cmp -s /tmp/q-o1/model.safetensors /tmp/q-o2/model.safetensors 2>/dev/null; echo "o1 vs o2 model.safetensors cmp rc=$?"
pack; log done
