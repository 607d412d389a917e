#!/usr/bin/env bash
# Compiles the act_order GPU round (issue 20, part 1) here, where the
# compiler is, into OUT (default build-act-order, git-ignored); carry it
# whole to the GPU machine and run bench/act-order/run.sh there:
#
# - OUT/artifacts/<model>-<part>-<enc>.qfa: the projections of one layer
#   input of models nothing is tuned on (bench/tuning-db.json has neither),
#   Qwen2.5-7B (hidden 3584, kv 512, mlp 18944) and Qwen2.5-14B (5120,
#   1024, 13824): `qkv` (q, k and v of one input: one qf.group), `gateup`
#   (silu(gate) * up: one gated matmul) and `down` (one weight), and
#   `qkvn` / `gateupn`, the same reading an RMSNorm of the layer input as
#   in a decoder layer (act_order's default compile folds the norm: the
#   norm launch writes the permuted input, docs/act-order.md; `aop`: the
#   same without that fusion, a permute launch after the plain norm), and
#   `downs`, down reading a silu_mul of gate and up as when gate/up is not
#   the gated kernel (act_order's default compile folds the silu_mul: its
#   launch writes the permuted input; `aop`: without that fusion, a
#   permute launch after the plain silu_mul launch), and `mlp`, gate/up
#   (one gated matmul) and the down_proj that reads it (act_order's default
#   compile has the gated kernel store down's input in down's sorted
#   column order; `aop`: with --act-order-sorted-output=false, a permute
#   launch before down), and `mlpn`, the same behind the RMSNorm of the
#   layer input, as in a decoder layer, and `o` (o_proj: hidden x hidden,
#   on its own input, so a permute launch of its own), and `attno`,
#   rotary attention (head dim 128, a 1024-row cache) and the o_proj that reads
#   it (act_order's default compile has the attention kernel store in
#   o_proj's sorted order up to batch 16), each
#   in act_order int4-g128 (`ao`) and plain int4-g128 (`int4`), the default
#   compile a user gets (no --tuning-db, default chip sm_90), batches
#   1, 2, 4, 8, 16, 32, 64, 128;
# - OUT/runs.txt: one qfuse-bench process per model and part (name, then
#   arguments): "check-*" runs compare every plan of both artifacts with
#   the C++ reference on random weights whose act_order perms are equal
#   per input (the fused groups run) and time them in the same process;
#   "fallback-*" runs check the act_order artifact again with a perm per
#   weight (--distinct-perms: the fallback the artifact carries for perms
#   that differ runs), without timing;
# - OUT/src: the runtime's sources (no compiler) and the vendored headers
#   (build-vendor), so that run.sh builds qfuse-bench and the runtime's GPU
#   tests there; OUT/src/artifacts/act-order: PermGuardsGpuTest's artifacts;
# - OUT/COMMIT, OUT/COMPILE (the exact commands), OUT/compile.log, and
#   OUT/launches.txt: the launches (permutes among them) of a Llama-3-8B
#   act_order int4-g128 decode plan at batch 1 and at batch 16.
#
#   bench/act-order/make-artifacts.sh [build dir, default build] [OUT]
#
# MODELS, BATCHES and PARTS replace the defaults below. AO_EXTRA="tag:flags"
# adds an act_order variant <model>-<part>-ao<tag> compiled with those
# qfuse-compile flags (e.g. AO_EXTRA="t:--sorted-attention-max-batch=4096"),
# timed beside the others.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
build="${1:-build}"
out="${2:-build-act-order}"
compile="$build/bin/qfuse-compile"
batches="${BATCHES:-1,2,4,8,16,32,64,128}"
models="${MODELS:-qwen2.5-7b:3584:512:18944 qwen2.5-14b:5120:1024:13824}"
[ -x "$compile" ] || { echo "no $compile" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/artifacts" "$out/src"
git rev-parse --short HEAD > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
: > "$out/COMPILE"
: > "$out/compile.log"
: > "$out/runs.txt"
encoding() {
  case "$1" in
    ao) echo "int4, group = 128, scale = f16, act_order" ;;
    int4) echo "int4, group = 128, scale = f16" ;;
  esac
}
# The IR of one part: qkv, gateup, down, downs, qkvn or gateupn of hidden h, kv
# width v, mlp i.
emit() { # part enc-name h v i
  local part=$1 enc h=$3 v=$4 i=$5
  enc="#qf.enc<$(encoding "$2")>"
  case "$part" in
    qkv) cat <<IR
func.func @qkv(%x: tensor<?x${h}xf16>) -> (tensor<?x${h}xf16>, tensor<?x${v}xf16>, tensor<?x${v}xf16>) {
  %wq = qf.weight_ref "q_proj" : !qf.weight<${h}x${h}, $enc>
  %wk = qf.weight_ref "k_proj" : !qf.weight<${v}x${h}, $enc>
  %wv = qf.weight_ref "v_proj" : !qf.weight<${v}x${h}, $enc>
  %q = qf.matmul %x, %wq : tensor<?x${h}xf16>, !qf.weight<${h}x${h}, $enc> -> tensor<?x${h}xf16>
  %k = qf.matmul %x, %wk : tensor<?x${h}xf16>, !qf.weight<${v}x${h}, $enc> -> tensor<?x${v}xf16>
  %v = qf.matmul %x, %wv : tensor<?x${h}xf16>, !qf.weight<${v}x${h}, $enc> -> tensor<?x${v}xf16>
  return %q, %k, %v : tensor<?x${h}xf16>, tensor<?x${v}xf16>, tensor<?x${v}xf16>
}
IR
    ;;
    qkvn) cat <<IR
func.func @qkvn(%h: tensor<?x${h}xf16>) -> (tensor<?x${h}xf16>, tensor<?x${v}xf16>, tensor<?x${v}xf16>) {
  %g = qf.tensor_ref "input_layernorm" : tensor<${h}xf16>
  %x = qf.rms_norm %h, %g {eps = 1.0e-06 : f32} : tensor<?x${h}xf16>, tensor<${h}xf16> -> tensor<?x${h}xf16>
  %wq = qf.weight_ref "q_proj" : !qf.weight<${h}x${h}, $enc>
  %wk = qf.weight_ref "k_proj" : !qf.weight<${v}x${h}, $enc>
  %wv = qf.weight_ref "v_proj" : !qf.weight<${v}x${h}, $enc>
  %q = qf.matmul %x, %wq : tensor<?x${h}xf16>, !qf.weight<${h}x${h}, $enc> -> tensor<?x${h}xf16>
  %k = qf.matmul %x, %wk : tensor<?x${h}xf16>, !qf.weight<${v}x${h}, $enc> -> tensor<?x${v}xf16>
  %v = qf.matmul %x, %wv : tensor<?x${h}xf16>, !qf.weight<${v}x${h}, $enc> -> tensor<?x${v}xf16>
  return %q, %k, %v : tensor<?x${h}xf16>, tensor<?x${v}xf16>, tensor<?x${v}xf16>
}
IR
    ;;
    gateupn) cat <<IR
func.func @gateupn(%h: tensor<?x${h}xf16>) -> tensor<?x${i}xf16> {
  %g = qf.tensor_ref "post_attention_layernorm" : tensor<${h}xf16>
  %x = qf.rms_norm %h, %g {eps = 1.0e-06 : f32} : tensor<?x${h}xf16>, tensor<${h}xf16> -> tensor<?x${h}xf16>
  %wg = qf.weight_ref "gate_proj" : !qf.weight<${i}x${h}, $enc>
  %wu = qf.weight_ref "up_proj" : !qf.weight<${i}x${h}, $enc>
  %gt = qf.matmul %x, %wg : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %u = qf.matmul %x, %wu : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %a = qf.silu_mul %gt, %u : tensor<?x${i}xf16>
  return %a : tensor<?x${i}xf16>
}
IR
    ;;
    gateup) cat <<IR
func.func @gateup(%x: tensor<?x${h}xf16>) -> tensor<?x${i}xf16> {
  %wg = qf.weight_ref "gate_proj" : !qf.weight<${i}x${h}, $enc>
  %wu = qf.weight_ref "up_proj" : !qf.weight<${i}x${h}, $enc>
  %g = qf.matmul %x, %wg : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %u = qf.matmul %x, %wu : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %a = qf.silu_mul %g, %u : tensor<?x${i}xf16>
  return %a : tensor<?x${i}xf16>
}
IR
    ;;
    downs) cat <<IR
func.func @downs(%g: tensor<?x${i}xf16>, %u: tensor<?x${i}xf16>) -> tensor<?x${h}xf16> {
  %w = qf.weight_ref "down_proj" : !qf.weight<${h}x${i}, $enc>
  %a = qf.silu_mul %g, %u : tensor<?x${i}xf16>
  %y = qf.matmul %a, %w : tensor<?x${i}xf16>, !qf.weight<${h}x${i}, $enc> -> tensor<?x${h}xf16>
  return %y : tensor<?x${h}xf16>
}
IR
    ;;
    mlp) cat <<IR
func.func @mlp(%x: tensor<?x${h}xf16>) -> tensor<?x${h}xf16> {
  %wg = qf.weight_ref "gate_proj" : !qf.weight<${i}x${h}, $enc>
  %wu = qf.weight_ref "up_proj" : !qf.weight<${i}x${h}, $enc>
  %wd = qf.weight_ref "down_proj" : !qf.weight<${h}x${i}, $enc>
  %g = qf.matmul %x, %wg : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %u = qf.matmul %x, %wu : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %a = qf.silu_mul %g, %u : tensor<?x${i}xf16>
  %y = qf.matmul %a, %wd : tensor<?x${i}xf16>, !qf.weight<${h}x${i}, $enc> -> tensor<?x${h}xf16>
  return %y : tensor<?x${h}xf16>
}
IR
    ;;
    mlpn) cat <<IR
func.func @mlpn(%h: tensor<?x${h}xf16>) -> tensor<?x${h}xf16> {
  %n = qf.tensor_ref "post_attention_layernorm" : tensor<${h}xf16>
  %x = qf.rms_norm %h, %n {eps = 1.0e-06 : f32} : tensor<?x${h}xf16>, tensor<${h}xf16> -> tensor<?x${h}xf16>
  %wg = qf.weight_ref "gate_proj" : !qf.weight<${i}x${h}, $enc>
  %wu = qf.weight_ref "up_proj" : !qf.weight<${i}x${h}, $enc>
  %wd = qf.weight_ref "down_proj" : !qf.weight<${h}x${i}, $enc>
  %g = qf.matmul %x, %wg : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %u = qf.matmul %x, %wu : tensor<?x${h}xf16>, !qf.weight<${i}x${h}, $enc> -> tensor<?x${i}xf16>
  %a = qf.silu_mul %g, %u : tensor<?x${i}xf16>
  %y = qf.matmul %a, %wd : tensor<?x${i}xf16>, !qf.weight<${h}x${i}, $enc> -> tensor<?x${h}xf16>
  return %y : tensor<?x${h}xf16>
}
IR
    ;;
    o) cat <<IR
func.func @o(%x: tensor<?x${h}xf16>) -> tensor<?x${h}xf16> {
  %w = qf.weight_ref "o_proj" : !qf.weight<${h}x${h}, $enc>
  %y = qf.matmul %x, %w : tensor<?x${h}xf16>, !qf.weight<${h}x${h}, $enc> -> tensor<?x${h}xf16>
  return %y : tensor<?x${h}xf16>
}
IR
    ;;
    attno) cat <<IR
func.func @attno(%q: tensor<?x${h}xf16>, %k: tensor<?x${v}xf16>, %v: tensor<?x${v}xf16>, %kc: tensor<1024x${v}xf16>, %vc: tensor<1024x${v}xf16>, %pos: tensor<?xi32>) -> (tensor<?x${h}xf16>, tensor<1024x${v}xf16>, tensor<1024x${v}xf16>) {
  %a, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = $((h / 128)) : i64, num_kv_heads = $((v / 128)) : i64, head_dim = 128 : i64, rope_theta = 10000.0 : f64} : (tensor<?x${h}xf16>, tensor<?x${v}xf16>, tensor<?x${v}xf16>, tensor<1024x${v}xf16>, tensor<1024x${v}xf16>, tensor<?xi32>) -> (tensor<?x${h}xf16>, tensor<1024x${v}xf16>, tensor<1024x${v}xf16>)
  %w = qf.weight_ref "o_proj" : !qf.weight<${h}x${h}, $enc>
  %y = qf.matmul %a, %w : tensor<?x${h}xf16>, !qf.weight<${h}x${h}, $enc> -> tensor<?x${h}xf16>
  return %y, %kc1, %vc1 : tensor<?x${h}xf16>, tensor<1024x${v}xf16>, tensor<1024x${v}xf16>
}
IR
    ;;
    down) cat <<IR
func.func @down(%x: tensor<?x${i}xf16>) -> tensor<?x${h}xf16> {
  %w = qf.weight_ref "down_proj" : !qf.weight<${h}x${i}, $enc>
  %y = qf.matmul %x, %w : tensor<?x${i}xf16>, !qf.weight<${h}x${i}, $enc> -> tensor<?x${h}xf16>
  return %y : tensor<?x${h}xf16>
}
IR
    ;;
  esac
}
for spec in $models; do
  IFS=: read -r model h v i <<< "$spec"
  for part in ${PARTS:-qkv gateup down downs qkvn gateupn mlp}; do
    args=""
    # aop, on the parts behind a norm or a silu_mul: act_order without the
    # act-order-norm and act-order-silu-mul fusions, so a permute launch
    # follows the plain norm or silu_mul launch, as in the parts without
    # one; ao of the downs part asks for act-order-silu-mul (opt-in).
    variants="ao int4"
    case "$part" in qkvn|gateupn|downs|mlp|attno) variants="ao aop int4" ;; esac
    extra_tag="${AO_EXTRA:-}"; extra_tag="${extra_tag%%:*}"
    [ -n "${AO_EXTRA:-}" ] && variants="$variants ao$extra_tag"
    for enc in $variants; do
      name="$model-$part-$enc"
      flags=""
      [ "$enc" = aop ] && flags=" --fuse=gated-mlp,epilogue,shared-input,rotary-attention"
      case "$enc:$part" in aop:mlp|aop:attno) flags=" --act-order-sorted-output=false" ;; esac
      [ "$enc" = ao ] && [ "$part" = downs ] && flags=" --fuse=default,act-order-silu-mul"
      [ -n "${AO_EXTRA:-}" ] && [ "$enc" = "ao$extra_tag" ] && flags=" ${AO_EXTRA#*:}"
      base=ao; [ "$enc" = int4 ] && base=int4
      emit "$part" "$base" "$h" "$v" "$i" > "$out/artifacts/$name.mlir"
      cmd="$compile $out/artifacts/$name.mlir --batch-sizes=$batches$flags -o $out/artifacts/$name.qfa"
      echo "$cmd" >> "$out/COMPILE"
      { echo "== $name"; $cmd 2>&1 | sed 's/^.*remark: //' || true; } >> "$out/compile.log"
      [ -f "$out/artifacts/$name.qfa" ] || { echo "FAILED $name" >&2; exit 1; }
      args="$args --artifact artifacts/$name.qfa"
    done
    # attno's matmul reads attention's output, which qfuse-bench's check
    # cannot make (it fills no positions): timed only; SortedAttentionGpu
    # checks that output bit for bit against the permute launch.
    if [ "$part" = attno ]; then
      echo "check-$model-$part$args --batch $batches" >> "$out/runs.txt"
      continue
    fi
    echo "check-$model-$part$args --batch $batches --check" >> "$out/runs.txt"
    echo "fallback-$model-$part --artifact artifacts/$model-$part-ao.qfa --batch $batches --check-only --distinct-perms" >> "$out/runs.txt"
  done
done

# The launches of a whole Llama-3-8B act_order decode plan at 1 and 16.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
PYTHONPATH=python-frontend python3 -m qfuse emit --config examples/configs/llama3-8b.json \
  --encoding '#qf.enc<int4, group = 128, scale = f16, act_order>' --batch dynamic \
  --max-seq 1024 -o "$tmp/l8b-ao.mlir"
: > "$out/launches.txt"
for b in 1 16; do
  cmd="$compile $tmp/l8b-ao.mlir --batch-sizes=$b -o $tmp/l8b-ao-b$b.qfa"
  echo "$cmd" >> "$out/COMPILE"
  $cmd 2>> "$out/compile.log"
  python3 bench/act-order/count-launches.py "$tmp/l8b-ao-b$b.qfa" | tee -a "$out/launches.txt"
done

# PermGuardsGpuTest's artifacts, where the runtime's tests look for them,
# from the list the build compiles them by.
mkdir -p "$out/src/artifacts/act-order"
grep -E '^[^#]' unittests/Runtime/Inputs/act-order-artifacts.txt |
  while read -r name input fuse batches extra; do
    cmd="$compile test/Tools/qfuse-cpu-check/Inputs/act-order-$input.mlir --fuse=$fuse${extra:+ $extra} --batch-sizes=$batches -o $out/src/artifacts/act-order/$name.qfa"
    echo "$cmd" >> "$out/COMPILE"
    $cmd 2>> "$out/compile.log"
  done

# The runtime's sources (no compiler) and its vendored headers.
git archive HEAD runtime format sim unittests CMakeLists.txt cmake scripts test/Tools/qfuse-cpu-check/Inputs \
  | tar -x -C "$out/src"
[ -d build-vendor ] || runtime/tools/vendor-headers.sh > /dev/null
cp -r build-vendor "$out/src/"
cp bench/act-order/run.sh bench/act-order/summarize.py "$out/"
echo "make-artifacts: $(wc -l < "$out/runs.txt") runs, $(du -sh "$out" | cut -f1) in $out"
