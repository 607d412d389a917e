#!/usr/bin/env bash
# GPU machine, issue 19 part 3: qfuse-quantize with the fp16 weights loaded
# beside the layer loop (BackgroundLoad), against the serial load
# (QFUSE_LOAD_OVERLAP=0), on a Llama-3-8B-shaped random fp16 checkpoint on
# disk (bench/random-checkpoint.py), int4-g128, 8 x 256 random tokens, the
# artifacts of build-rtn (bench/quantize-at-load/make-artifacts.sh). Wall
# time by /usr/bin/time, output to files (no pipe). Checks: the outputs of
# the overlapped and serial runs byte-identical; --resume after a kill equal
# to a whole run; --act-order and --host-weights overlapped == serial; the
# GPU tests of the loader (BackgroundLoadGpu, with the tiny Llama of
# artifacts/models carried). Then `python3 -m qfuse generate --model`
# (C API quantize-at-load) against qfuse-run, timed. Issue 19's work in
# front of the layers (docs/gptq.md, "In front of the layers"): a run
# without the solvers' warm-up (QFUSE_GPTQ_WARM_UP=0), the phases that say
# when the embedding and layer 0 were on the device, and last a bf16
# checkpoint (its embedding converted in row ranges) overlapped vs serial:
# overlapped, its modules go to the GPU once and are rounded to f16 there
# (issue 19 part 1, qf_round_bf16_to_f16), serial and --host-weights round
# on the host; all three byte-identical.
# Archive: $OUT/ovl.tgz.
set -uo pipefail
out="${OUT:-/tmp/out}"; res=/tmp/ovl; rm -rf $res; mkdir -p $res $out
A=$PWD/build-rtn; b=/tmp/qb-ovl; m=/tmp/l8b
log() { echo "[$(date +%T)] $*"; }
pack() { tar -C /tmp -czf $out/ovl.tgz ovl; }
nvidia-smi -L; git log --oneline -1 2>/dev/null > $res/COMMIT; cp $A/COMMIT $res/ARTIFACTS_COMMIT
log build
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release > $res/cfg.log 2>&1 || { tail $res/cfg.log; exit 1; }
cmake --build $b -j16 --target qfuse-quantize qfuse-run qfuse_c qfuse-runtime-gpu-tests > $res/build.log 2>&1 || { tail -30 $res/build.log; pack; exit 1; }
log "GPU tests: BackgroundLoadGpu, CalibrationGpu, Executor, DeviceHalfRound"
QFUSE_CALIBRATION_QFA=$PWD/artifacts/models/tiny-llama-fp16.qfa QFUSE_QUANTIZE_QFA=$A/quantize-formats.qfa \
  timeout 120 $b/unittests/Runtime/qfuse-runtime-gpu-tests \
  --gtest_filter='BackgroundLoadGpu*:CalibrationGpu*:Gpu.Executor*:DeviceHalfRound*' > $res/gpu-tests.log 2>&1; echo "rc=$?" >> $res/gpu-tests.log
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|rc=" $res/gpu-tests.log | head
log checkpoint
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m > $res/checkpoint.log 2>&1; tail -1 $res/checkpoint.log; sync
cp $A/llama3-8b/*.qfa $m/
cat $m/*.safetensors > /dev/null
Q="$b/bin/qfuse-quantize --model $m --encoding int4-g128 --calibration random:8 --seq-len 256 --fp16-artifact $A/llama3-8b/qfuse-fp16-calib-256.qfa"
q() { # name, env..., then -- extra args
  local name=$1; shift; local envs=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  rm -rf /tmp/q-$name
  env "${envs[@]}" timeout 120 /usr/bin/time -v -o $res/$name.time $Q --out /tmp/q-$name --json $res/$name.json "$@" > $res/$name.log 2>&1
  echo "rc=$?" >> $res/$name.log
  echo "$name: wall $(grep Elapsed $res/$name.time | awk '{print $NF}') $(grep -E 'fp16 weights|rc=' $res/$name.log | tr '\n' ' ')"
}
same() { # a b
  local ok=yes
  for f in /tmp/q-$1/*.safetensors /tmp/q-$1/*.json; do cmp "$f" /tmp/q-$2/"$(basename "$f")" >> $res/cmp.txt 2>&1 || ok=no; done
  ls /tmp/q-$1/*.safetensors > /dev/null 2>&1 || ok="no output"
  echo "$1 vs $2: identical=$ok" | tee -a $res/cmp.txt
}
log "8 x 256: overlapped x3, serial x1"
q o1 --; q o2 --; q o3 --; q serial QFUSE_LOAD_OVERLAP=0 --
same o1 o2; same o1 serial; rm -rf /tmp/q-o2 /tmp/q-o3; pack
log "resume after a kill after layer 10"
q killed QFUSE_TEST_KILL_AFTER_LAYER=10 --
mv /tmp/q-killed /tmp/q-resumed 2>/dev/null
rm -rf /tmp/q-resumed-keep; env timeout 120 $Q --out /tmp/q-resumed --resume --json $res/resumed.json > $res/resumed.log 2>&1; echo "rc=$?" >> $res/resumed.log
grep -E "resuming|rc=" $res/resumed.log | tr '\n' ' '; echo
same o1 resumed; rm -rf /tmp/q-resumed /tmp/q-serial; pack
log "act_order and host weights, overlapped vs serial"
# act_order with int4-g128 needs static groups (the encoding has no act_order).
q ao -- --act-order --static-groups; q ao0 QFUSE_LOAD_OVERLAP=0 -- --act-order --static-groups; same ao ao0; rm -rf /tmp/q-ao /tmp/q-ao0
q nowarm QFUSE_GPTQ_WARM_UP=0 --; same o1 nowarm; rm -rf /tmp/q-nowarm
q hw -- --host-weights; q hw0 QFUSE_LOAD_OVERLAP=0 -- --host-weights; same hw hw0; rm -rf /tmp/q-hw /tmp/q-hw0 /tmp/q-o1; pack
log "qfuse-run vs python3 -m qfuse generate (C API), quantize-at-load"
timeout 120 /usr/bin/time -v -o $res/run.time $b/bin/qfuse-run --model $m --encoding int4-g128 \
  --prompt-ids 1,2,3 --max-new-tokens 8 --json $res/run.json > $res/run.log 2>&1; echo "rc=$?" >> $res/run.log
echo "qfuse-run wall $(grep Elapsed $res/run.time | awk '{print $NF}'); $(grep -E 'bound in|tokens' $res/run.log | tail -2 | tr '\n' ' ')"
QFUSE_C_LIBRARY=$b/lib/libqfuse_c.so PYTHONPATH=python-frontend timeout 120 /usr/bin/time -v -o $res/generate.time \
  python3 -X importtime -m qfuse generate --model $m --prompt-ids 1,2,3 --max-new-tokens 8 > $res/generate.log 2> $res/generate.err; echo "rc=$?" >> $res/generate.log
echo "generate wall $(grep Elapsed $res/generate.time | awk '{print $NF}'); $(grep -vE '^import time' $res/generate.err | tail -3 | tr '\n' ' ') $(tail -3 $res/generate.log | tr '\n' ' ')"
summary() {
python3 - $res <<'PY' | tee $res/summary.txt
import json, os, sys
res = sys.argv[1]
keys = ("setup", "load", "load_prologue_ready", "load_first_layer_ready", "load_first_layer",
        "load_wait", "solver_warm_up_wait", "layers", "write")
print("| run | wall s | own s | " + " | ".join(keys) + " | layer 1 (collect, gptq) |")
print("|---|---|---|" + "---|" * len(keys) + "---|")
for name in ("o1", "o2", "o3", "serial", "nowarm", "ao", "ao0", "hw", "hw0", "b1", "b0"):
    p = os.path.join(res, name + ".json")
    if not os.path.exists(p):
        print(f"| {name} | no JSON |"); continue
    r = json.load(open(p)); ph = r.get("phases", {})
    wall = [l.split()[-1] for l in open(os.path.join(res, name + ".time")) if "Elapsed" in l]
    g = lambda k: f"{ph[k]:.2f}" if isinstance(ph.get(k), (int, float)) else "-"
    l1 = r.get("layers", [{}])[0] if r.get("layers") else {}
    first = f"{l1.get('seconds', 0):.2f} ({l1.get('collect_seconds', 0):.2f}, {l1.get('gptq_seconds', 0):.2f})" if l1 else "-"
    print(f"| {name} | {wall[0] if wall else '-'} | {r.get('seconds', '-')} | " + " | ".join(g(k) for k in keys) + f" | {first} |")
PY
}
summary; pack
log "bf16 checkpoint: overlapped vs serial (the embedding converted in row ranges)"
rm -rf $m/*.safetensors $m/*.json
python3 bench/random-checkpoint.py examples/configs/llama3-8b.json $m bf16 > $res/checkpoint-bf16.log 2>&1; tail -1 $res/checkpoint-bf16.log; sync
cp $A/llama3-8b/*.qfa $m/; cat $m/*.safetensors > /dev/null
q b1 --; q b0 QFUSE_LOAD_OVERLAP=0 --; same b1 b0
q bh -- --host-weights; same b1 bh; grep -h "rounded to f16" $res/b1.log $res/bh.log
rm -rf /tmp/q-b1 /tmp/q-b0 /tmp/q-bh
summary; log done; pack
