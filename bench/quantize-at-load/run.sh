#!/usr/bin/env bash
# The quantize-at-load round on the GPU machine (docs/quantize-at-load.md),
# from the repository root, with build-rtn/ carried from the compiler
# machine (bench/quantize-at-load/make-artifacts.sh):
#
#   1. builds the runtime from source without MLIR;
#   2. runs QuantizeGpuTest (every generated qf.quantize kernel against
#      format::quantizeRTN), KeptValuesGpuTest (unquantized 2:4 on every
#      f16 and bf16 bit pattern) and DeviceGatherGpuTest (the
#      qf_gather_fields kernels against format::packCodeBytes and
#      format::repack for every encoding x layout), byte for byte, into
#      0xFF-poisoned outputs;
#   3. writes a Llama-3-8B-shaped random fp16 checkpoint (transformers) to
#      /tmp/l8b unless it is there;
#   4. times `qfuse-run --model /tmp/l8b --encoding int4-g128` binding it
#      into the int4-g128 artifact with round-to-nearest and the kernel
#      layouts on the GPU (--rtn device), then runs --rtn check (GPU and
#      host, every weight's components and every layout's bytes compared),
#      and compares the generated tokens; first the --rtn host baseline
#      (host RTN and format::repack; SKIP_HOST=1 leaves it out); then the
#      same three for the 2:4+int4 (sp-int4) and unquantized 2:4 (sp-f16)
#      artifacts (SKIP_SPARSE=1 leaves them out);
#   5. times `qfuse-quantize` 8 x 256 (GPTQ into the qfuse format) with the
#      codes packed on the GPU, then on the host (QFUSE_PACK=host), and
#      `cmp`s the two outputs' safetensors; then QFUSE_PACK=check (both,
#      compared module by module inside the run).
#
# Logs and JSON go to /tmp/rtn-round/rtn, archived as $OUT/rtn.tgz (one
# file: few files come back from the GPU machine), with the tables in
# $OUT/summary.txt; they also come last on stdout. SKIP_TEST=1 skips 2,
# SKIP_CHECKPOINT=1 skips 3-4, SKIP_GPTQ=1 skips 5 (to split the round over
# several commands).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/out}"; work=/tmp/rtn-round; res="$work/rtn"
rm -rf "$work"; mkdir -p "$res" "$out"
art="$root/build-rtn"; b=/tmp/qb-rtn; m=/tmp/l8b
log() { echo "[$(date +%T)] $*"; }
[ -f "$art/quantize-formats.qfa" ] || { echo "no $art: run make-artifacts.sh on the compiler machine and carry build-rtn" >&2; exit 1; }
nvidia-smi -L || true
cp "$art/COMMIT" "$res/ARTIFACTS_COMMIT" 2>/dev/null || true

log "build the runtime (no MLIR)"
cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF -DQFUSE_TOKENIZER_ORACLE=OFF \
  -DCMAKE_BUILD_TYPE=Release > "$res/configure.log" 2>&1 || { tail -30 "$res/configure.log"; exit 1; }
cmake --build $b -j"$(nproc)" --target qfuse-run qfuse-runtime-gpu-tests > "$res/build.log" 2>&1 \
  || { tail -40 "$res/build.log"; exit 1; }

if [ -z "${SKIP_TEST:-}" ]; then
  log "QuantizeGpuTest, DeviceGatherGpuTest, OddWidthGatherGpuTest"
  QFUSE_QUANTIZE_QFA="$art/quantize-formats.qfa" timeout 300 \
    $b/unittests/Runtime/qfuse-runtime-gpu-tests --gtest_filter='QuantizeGpuTest.*:KeptValuesGpuTest.*:DeviceGatherGpuTest.*:OddWidthGatherGpuTest.*' \
    > "$res/quantize-gpu-test.log" 2>&1; echo "rc=$?" >> "$res/quantize-gpu-test.log"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure|rc=" "$res/quantize-gpu-test.log" | head -20
fi

if [ -z "${SKIP_CHECKPOINT:-}" ]; then
  if [ ! -f $m/config.json ]; then
    log "llama3-8b: random fp16 checkpoint"
    python3 "$root/bench/random-checkpoint.py" "$root/examples/configs/llama3-8b.json" $m \
      > "$res/checkpoint.log" 2>&1
    tail -1 "$res/checkpoint.log"
  fi
  cp "$art"/llama3-8b/qfuse-int4-g128.qfa "$art"/llama3-8b/qfuse-int4-g128.quantize.qfa $m/
  # The file from the page cache for every run (the first pays the disk).
  cat $m/*.safetensors > /dev/null
  bind() { # name, then qfuse-run options (the artifact: --encoding or --artifact)
    local name=$1; shift
    log "qfuse-run --model $m $*"
    timeout 240 /usr/bin/time -v $b/bin/qfuse-run --model $m \
      --prompt-ids 1,2,3 --max-new-tokens 8 --json "$res/$name.json" "$@" \
      > "$res/$name.log" 2>&1; echo "rc=$?" >> "$res/$name.log"
    grep -E "quantize-at-load|bound in|tokens:|Elapsed|error|rc=" "$res/$name.log"
  }
  runs="device check"
  [ -z "${SKIP_HOST:-}" ] && { bind host --encoding int4-g128 --rtn host; runs="host $runs"; }
  bind device --encoding int4-g128 --rtn device
  bind check --encoding int4-g128 --rtn check
  if [ -z "${SKIP_SPARSE:-}" ]; then
    for sp in sp-int4 sp-f16; do
      [ -f "$art/llama3-8b/qfuse-$sp.qfa" ] || { echo "no $art/llama3-8b/qfuse-$sp.qfa"; continue; }
      cp "$art"/llama3-8b/qfuse-$sp.qfa "$art"/llama3-8b/qfuse-$sp.quantize.qfa $m/
      for mode in host device check; do
        [ $mode = host ] && [ -n "${SKIP_HOST:-}" ] && continue
        bind $sp-$mode --artifact $m/qfuse-$sp.qfa --rtn $mode
        runs="$runs $sp-$mode"
      done
    done
  fi
  python3 - "$res" $runs <<'PY' | tee "$res/summary.txt"
import json, os, sys
res = sys.argv[1]
rows = []
for name in sys.argv[2:]:
    path = os.path.join(res, name + ".json")
    if not os.path.exists(path):
        rows.append((name, "no JSON", "", "", "")); continue
    r = json.load(open(path))["run"]
    rows.append((name, f"{r['load_seconds']:.1f} s", r.get("rtn_device_weights"),
                 r.get("rtn_host_weights"), r.get("layouts_device"),
                 r.get("layouts_host"), r["tokens"]))
print("| run | bound in | RTN on the GPU | RTN on the host | layouts on the GPU | layouts on the host | tokens |")
print("|---|---|---|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(str(c) for c in row) + " |")
# Runs of one artifact (int4-g128, sp-int4-*, sp-f16-*) give the same tokens.
groups = {}
for row in rows:
    group = row[0].rsplit("-", 1)[0] if "-" in row[0] else "int4-g128"
    groups.setdefault(group, []).append(row)
for group, members in groups.items():
    tokens = [str(row[-1]) for row in members if len(row) > 5 and row[-1]]
    same = len(set(tokens)) == 1 and len(tokens) == len(members)
    print(f"{group} tokens: " + (f"identical in the {len(members)} runs" if same else "DIFFER"))
PY
fi
if [ -z "${SKIP_GPTQ:-}" ]; then
  [ -f $m/config.json ] || { echo "no checkpoint at $m (run without SKIP_CHECKPOINT first)"; exit 1; }
  cp "$art"/llama3-8b/qfuse-int4-g128.qfa "$art"/llama3-8b/qfuse-int4-g128.quantize.qfa \
     "$art"/llama3-8b/qfuse-gptq-int4-g128.qfa $m/
  log "build qfuse-quantize"
  cmake --build $b -j"$(nproc)" --target qfuse-quantize >> "$res/build.log" 2>&1 \
    || { tail -40 "$res/build.log"; exit 1; }
  gptq() { # name, then environment assignments
    local name=$1; shift
    log "qfuse-quantize 8 x 256 ($name${*:+: $*})"
    rm -rf /tmp/q-$name
    env "$@" timeout 240 /usr/bin/time -v $b/bin/qfuse-quantize --model $m --encoding int4-g128 \
      --calibration random:8 --seq-len 256 --out /tmp/q-$name \
      --fp16-artifact "$art"/llama3-8b/qfuse-fp16-calib-256.qfa --json "$res/gptq-$name.json" \
      > "$res/gptq-$name.log" 2>&1; echo "rc=$?" >> "$res/gptq-$name.log"
    grep -E "codes packed on|qfuse-quantize:|Elapsed|rror|rc=" "$res/gptq-$name.log"
    ls -la /tmp/q-$name > "$res/gptq-$name.ls" 2>&1
  }
  gptq device
  gptq host QFUSE_PACK=host
  identical=yes
  for f in /tmp/q-host/*.safetensors; do
    cmp "$f" /tmp/q-device/"$(basename "$f")" >> "$res/gptq-cmp.txt" 2>&1 || identical=no
  done
  ls /tmp/q-host/*.safetensors > /dev/null 2>&1 || identical="no output"
  echo "device-packed vs host-packed safetensors: $identical" | tee -a "$res/gptq-cmp.txt"
  rm -rf /tmp/q-host /tmp/q-device
  gptq check QFUSE_PACK=check
  rm -rf /tmp/q-check
  python3 - "$res" "$identical" <<'PY' | tee -a "$res/summary.txt"
import json, os, sys
res, identical = sys.argv[1], sys.argv[2]
print()
print("| qfuse-quantize 8 x 256 | codes packed on | seconds | layers | write | rc |")
print("|---|---|---|---|---|---|")
for name in ("device", "host", "check"):
    path = os.path.join(res, f"gptq-{name}.json")
    rc = open(os.path.join(res, f"gptq-{name}.log")).read().strip().splitlines()[-1]
    if not os.path.exists(path):
        print(f"| {name} | no JSON | | | | {rc} |"); continue
    r = json.load(open(path))
    p = r.get("phases", {})
    print(f"| {name} | {r.get('codes_packed_on')} | {r['seconds']:.2f} | "
          f"{p.get('layers', 0):.2f} | {p.get('write', 0):.2f} | {rc} |")
print(f"outputs byte-identical (device vs host packing): {identical}")
PY
fi

log done
tar -C "$work" -czf "$out/rtn.tgz" rtn
cp "$res/summary.txt" "$out/" 2>/dev/null || true
