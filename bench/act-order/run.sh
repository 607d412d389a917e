#!/usr/bin/env bash
# The act_order GPU round (issue 20, part 1) on the GPU machine, from the
# repository root, with the directory bench/act-order/make-artifacts.sh
# wrote (default build-act-order) carried from the compiler machine:
#
#   1. builds the runtime from the carried sources without MLIR (its
#      vendored headers in DIR/src/build-vendor): qfuse-bench, the CPU unit
#      tests and the GPU unit tests;
#   2. runs PermGuardsTest (the load-time perm check, CPU) and
#      PermGuardsGpuTest (act_order q/k/v and gate/up, and the same behind
#      an RMSNorm, PermGuardsNormGpu: equal perms run the
#      fused group, perms of each weight's own the fallback, both equal to
#      the unfused artifact and to the C++ reference) and SiluMulPrologueGpu
#      (down_proj's input from the folded silu_mul launch: equal bit for
#      bit to the silu_mul + permute launches, and to the C++ reference)
#      and SortedOutputGpu (down_proj's input stored in its sorted order by
#      the gated gate/up kernel: equal bit for bit to the permute launch);
#   3. runs every line of DIR/runs.txt: per model and part, act_order and
#      plain int4-g128 checked against the C++ reference and timed in one
#      process ("check-*"), then the act_order artifact checked on the
#      fallback for perms that differ ("fallback-*", --distinct-perms);
#   4. summarize.py: act_order / plain int4-g128 per part and batch, and
#      whether the target holds (within 5% on parts of >= 8M weights,
#      10% below).
#
#   bench/act-order/run.sh [DIR, default build-act-order]
#
# Writes $OUT/act-order.tgz (default OUT ./gpu-out): act-order/<run>.json
# and .log, the unit tests' logs, manifest.tsv, summary.txt and .json; the
# summary also comes last on stdout. To fit a time limit per command, split
# the round: ONLY=<regex> runs only the runs.txt lines whose name matches
# (and writes act-order-<tag>.tgz), SKIP_TESTS=1 skips 2; the build (in
# ACT_ORDER_BUILD, default /tmp/qb-act-order) is incremental, so a second
# call rebuilds nothing.
set -uo pipefail
dir="$(cd "${1:-build-act-order}" && pwd)"
out="${OUT:-$PWD/gpu-out}"
work="${ACT_ORDER_WORK:-/tmp/act-order-round}"
res="$work/act-order"
b="${ACT_ORDER_BUILD:-/tmp/qb-act-order}"
rm -rf "$res"
mkdir -p "$res" "$out"
tag="${ONLY:+-$(printf '%s' "$ONLY" | tr -c 'a-zA-Z0-9.-' _)}"
archive() { tar czf "$out/act-order$tag.tgz" -C "$work" act-order; }
log() { echo "[$(date +%T)] $*"; }
export QFUSE_GIT_COMMIT="$(cat "$dir/COMMIT" 2>/dev/null || echo unknown)"
nvidia-smi -L > "$res/gpu.txt" 2>&1 || true
cp "$dir/runs.txt" "$dir/COMMIT" "$dir/COMPILE" "$dir/compile.log" "$dir/launches.txt" "$res/" 2>/dev/null

log "build the runtime (no MLIR)"
{ cmake -G Ninja -S "$dir/src" -B "$b" -DQFUSE_ENABLE_COMPILER=OFF \
    -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$b" -j"$(nproc)" --target qfuse-bench qfuse-runtime-tests \
    qfuse-runtime-gpu-tests; } > "$res/build.log" 2>&1 \
  || { tail -40 "$res/build.log"; archive; exit 1; }
bench="$b/bin/qfuse-bench"

failed=0
if [ -z "${SKIP_TESTS:-}" ]; then
  log "unit tests: PermGuardsTest (CPU), PermGuardsGpuTest"
  timeout 120 "$b/unittests/Runtime/qfuse-runtime-tests" \
    --gtest_filter='PermGuards*:*GPTQv1ActOrderGroupPerms*' \
    > "$res/perm-guards-test.log" 2>&1 || failed=$((failed + 1))
  QFUSE_ACT_ORDER_ARTIFACTS="$dir/src/artifacts/act-order" timeout 300 \
    "$b/unittests/Runtime/qfuse-runtime-gpu-tests" --gtest_filter='PermGuardsGpu*:PermGuardsNormGpu*:SiluMulPrologueGpu*:SortedOutputGpu*:SortedAttentionGpu*:SortedRotaryAttentionGpu*' \
    > "$res/perm-guards-gpu-test.log" 2>&1 || failed=$((failed + 1))
  grep -hE "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|qfuse-gpu-skip|Failure" \
    "$res/perm-guards-test.log" "$res/perm-guards-gpu-test.log" | head -20
  archive
fi

printf 'run\texit\tseconds\n' > "$res/manifest.tsv"
while read -r name args; do
  [ -z "$name" ] && continue
  [ -n "${ONLY:-}" ] && ! [[ "$name" =~ $ONLY ]] && continue
  t0=$(date +%s)
  # shellcheck disable=SC2086 # (the run's arguments, paths relative to $dir)
  (cd "$dir" && timeout 580 "$bench" $args --json "$res/$name.json") > "$res/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> "$res/manifest.tsv"
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1)); echo "FAILED ($rc) $name"; grep -E "FAIL|error" "$res/$name.log" | head -3
  else
    echo "ok $name: $(grep -h 'perm guards' "$res/$name.log" | head -1 | sed 's/^[^:]*: //')"
  fi
  archive
done < "$dir/runs.txt"
python3 "$dir/summarize.py" "$res" > "$res/summary.txt" 2>&1 || failed=$((failed + 1))
cat "$res/summary.txt"
archive
log "$failed failed"
[ "$failed" -eq 0 ]
