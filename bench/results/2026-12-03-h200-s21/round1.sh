#!/usr/bin/env bash
# Session 21, GPU call 1 (build-s21 carried: tune-ovl.tgz, tune-sync.tgz,
# zoo.tgz, wgmma-ovl.qfa, vendor.tgz, rtn.tgz; main at 918b12c plus the
# wgmma overlap, `--qf-wgmma-overlap`, compiled here):
#  part a: the wgmma kernel with a step's MMAs in flight while the next
#   step decodes: every wgmma candidate (`python3 -m qfuse tune --top 3`) of
#   the Llama-3-8B shapes (vocab cut to 2048) at batches 16-256, checked;
#   the wgmma check artifact of every format (Inputs/wgmma.mlir), checked;
#   four zoo shapes compiled the default way (sm_90a, no database) with and
#   without the overlap at batches 16-512, checked, one process each.
#  part b: the same tune candidates without the overlap (every family,
#   timing only: the reference of the comparison), then the bf16
#   checkpoint through qfuse-quantize (issue 19: ToHalves), overlapped
#   (b1) and serial (b0), byte-identical.
set -uo pipefail
part="${1:-a}"
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r1$part; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r1$part.tgz" -C /tmp r1$part; }
r=build-s21; b=/tmp/qb
[ -x $b/bin/qfuse-bench ] || {
  log build
  tar xzf $r/vendor.tgz
  { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build $b -j16 --target qfuse-bench qfuse-quantize; } > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
}
export QFUSE_BENCH=$b/bin/qfuse-bench
if [ "$part" = a ]; then
  tar xzf $r/tune-ovl.tgz -C /tmp; tar xzf $r/zoo.tgz -C /tmp
  log "wgmma check artifact, overlapped"
  timeout 150 $b/bin/qfuse-bench --artifact $r/wgmma-ovl.qfa --check --json $res/wgmma-ovl.json > $res/wgmma-ovl.log 2>&1
  echo "wgmma-ovl rc=$? $(grep -cE 'FAIL' $res/wgmma-ovl.log) FAIL lines"
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
  bash /tmp/tune-ovl/run.sh $res/tune-ovl 400 | tail -3; pack
else
  tar xzf $r/tune-sync.tgz -C /tmp; tar xzf $r/rtn.tgz
  log "tune candidates, as main (timing only)"
  bash /tmp/tune-sync/run.sh $res/tune-sync 330 | tail -3; pack
  log "bf16 checkpoint through qfuse-quantize, 8 x 256"
  m=/tmp/l8b; A=$PWD/build-rtn
  python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m bf16 > $res/checkpoint-bf16.log 2>&1; tail -1 $res/checkpoint-bf16.log
  cp $A/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
  Q="$b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:8 --seq-len 256 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa"
  q() { local name=$1; shift; local envs=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    rm -rf /tmp/q-$name
    env "${envs[@]}" timeout 100 /usr/bin/time -v -o $res/$name.time $Q --out /tmp/q-$name --json $res/$name.json "$@" > $res/$name.log 2>&1
    echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}')"; }
  same() { local ok=yes; for f in /tmp/q-$1/*.safetensors /tmp/q-$1/*.json; do cmp "$f" /tmp/q-$2/"$(basename "$f")" >> $res/cmp.txt 2>&1 || ok=no; done
    ls /tmp/q-$1/*.safetensors > /dev/null 2>&1 || ok="no output"; echo "$1 vs $2: identical=$ok" | tee -a $res/cmp.txt; }
  q b1 X=1 --; q b2 X=1 --; q b0 QFUSE_LOAD_OVERLAP=0 --; same b1 b0; same b1 b2
  grep -E "fp16 weights|bound|load" $res/b1.log | head -5
  pack
fi
log done
