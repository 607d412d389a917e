#!/usr/bin/env bash
# Session 22, GPU call 2 (build-s22b carried: vendor.tgz; rtn.tgz = build-rtn
# made by bench/quantize-at-load/make-artifacts.sh at the merge of nvfp4-qal;
# wgmma.qfa = test/Tools/qfuse-compile/Inputs/wgmma.mlir --chip=sm_90a with
# the gated wgmma cases; gu.tgz = the gate_up candidates of `python3 -m qfuse
# tune --config examples/configs/llama3-8b.json --batch-sizes 64,128,256,512
# --chip sm_90a --top 3 --prepare-only`; nv.tgz = `python3 -m qfuse compile
# --encoding nvfp4 --batch-sizes 1,8` of llama3-8b and its quantize artifact).
#  - QuantizeGpuTest, DeviceGatherGpuTest (NVFP4 quantize-at-load kernels);
#  - the wgmma check artifact, every plan checked (gated wgmma included);
#  - gate_up at batches 64-512: every candidate timed in one process per
#    batch (gated wgmma against mma.sync and dequant + cuBLAS), the default
#    checked at 128 and 512;
#  - qfuse-quantize 8 x 256: lm_head rounded by the GPU (default, x2),
#    QFUSE_RTN=check, QFUSE_RTN=host, outputs compared;
#  - qfuse-run NVFP4 quantize-at-load of the Llama-3-8B checkpoint:
#    --rtn device, --rtn check.
set -uo pipefail
out="${OUT:-/tmp/out}"; mkdir -p "$out"; res=/tmp/r2; rm -rf $res; mkdir -p $res
log() { echo "[$(date +%T)] $*"; }
pack() { tar czf "$out/r2.tgz" -C /tmp r2; }
r=build-s22b; b=/tmp/qb
log build
tar xzf $r/vendor.tgz; tar xzf $r/rtn.tgz; tar xzf $r/gu.tgz -C /tmp; tar xzf $r/nv.tgz -C /tmp
{ cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build $b -j16 --target qfuse-bench qfuse-quantize qfuse-run qfuse-runtime-gpu-tests; } > $res/build.log 2>&1 ||
  { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests"
QFUSE_QUANTIZE_QFA=$PWD/build-rtn/quantize-formats.qfa $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='QuantizeGpuTest.*:DeviceGatherGpuTest.*' > $res/unit-gpu.log 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" $res/unit-gpu.log
log "wgmma checks"
timeout 150 $b/bin/qfuse-bench --artifact $r/wgmma.qfa --check --json $res/wgmma.json > $res/wgmma.log 2>&1
echo "wgmma rc=$? $(grep -cE 'FAIL' $res/wgmma.log) FAIL lines, $(grep -c 'check ' $res/wgmma.log) check lines"; pack
log "gate_up candidates"
for m in 64 128 256 512; do
  arts=""; for a in /tmp/gu/artifacts/gate_up-b$m-*.qfa; do arts="$arts --artifact $a"; done
  timeout 120 $b/bin/qfuse-bench $arts --batch $m --gemm ${m}x28672x4096 --json $res/gu-b$m.json > $res/gu-b$m.log 2>&1
  echo "gate_up b$m rc=$?"; grep -E "cublas|plan" $res/gu-b$m.log | awk '{print $1, $2, $5}'
done
for a in gate_up-b128-W128N128S1K64T4C1 gate_up-b512-W128N128S1K64T4C1; do
  m=${a#gate_up-b}; m=${m%%-*}
  timeout 150 $b/bin/qfuse-bench --artifact /tmp/gu/artifacts/$a.qfa --batch $m --check-only > $res/check-$a.log 2>&1
  echo "check $a rc=$? $(grep -cE 'FAIL' $res/check-$a.log) FAIL lines"; grep -E "check " $res/check-$a.log | head -3
done; pack
log checkpoint
m=/tmp/l8b; A=$PWD/build-rtn
[ -f $m/config.json ] || python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1
cp $A/llama3-8b/*.qfa $m/; cp /tmp/nv/*.qfa $m/; cat $m/*.safetensors > /dev/null
q() { # name [env]
  local name=$1; shift; rm -rf /tmp/q-$name
  env "$@" timeout 120 /usr/bin/time -v -o $res/$name.time $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
    --calibration random:8 --seq-len 256 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa \
    --out /tmp/q-$name --json $res/$name.json > $res/$name.log 2>&1
  echo "$name rc=$? wall $(grep Elapsed $res/$name.time | awk '{print $NF}') $(grep 'leaves alone' $res/$name.log | cut -c1-200)"
}
log "qfuse-quantize 8 x 256"
q g1 X=1; q g2 X=1; q rcheck QFUSE_RTN=check; q rhost QFUSE_RTN=host
for o in g2 rcheck rhost; do cmp -s /tmp/q-g1/model.safetensors /tmp/q-$o/model.safetensors; echo "g1 vs $o cmp rc=$?"; done; pack
log "NVFP4 quantize-at-load"
for mode in device check; do
  timeout 200 /usr/bin/time -v -o $res/nv-$mode.time $b/bin/qfuse-run --model $m --encoding nvfp4 --rtn $mode \
    --prompt-ids 1,2,3 --max-new-tokens 8 --json $res/nv-$mode.json > $res/nv-$mode.log 2>&1
  echo "nv $mode rc=$? wall $(grep Elapsed $res/nv-$mode.time | awk '{print $NF}')"; grep -E "quantize-at-load|bound in|tokens" $res/nv-$mode.log | cut -c1-300
done
pack; log done
