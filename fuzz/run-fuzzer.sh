#!/usr/bin/env bash
# Runs one libFuzzer harness the two ways CI does (docs/fuzzing.md):
#
#   run-fuzzer.sh replay FUZZER SRC WORK          every file of SRC/corpus and
#                                                 SRC/crashes once
#   run-fuzzer.sh run FUZZER SRC WORK [SECONDS]   fuzz from SRC/corpus with
#                                                 SRC/dict; new inputs go to
#                                                 WORK/corpus, findings to
#                                                 WORK/findings/
#
# SRC is fuzz/<target> (never written); WORK a scratch folder in the build.
# Extra libFuzzer flags can be given in QFUSE_FUZZ_FLAGS.
set -euo pipefail
mode=$1 fuzzer=$2 src=$3 work=$4 seconds=${5:-10}
target=$(basename "$src")
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Per input: past -timeout seconds is a hang, past -rss_limit_mb (or a single
# malloc that large) is a finding too.
common=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
mkdir -p "$work"
shopt -s nullglob

case $mode in
replay)
  inputs=("$src"/corpus/* "$src"/crashes/*)
  if [ ${#inputs[@]} -eq 0 ]; then
    echo "run-fuzzer: $src has no corpus/ or crashes/ files" >&2
    exit 1
  fi
  echo "run-fuzzer: replaying ${#inputs[@]} inputs of $target"
  # One process runs them all, printing "Running: FILE" before each.
  if ! "$fuzzer" "${common[@]}" ${QFUSE_FUZZ_FLAGS:-} "${inputs[@]}" \
      > "$work/replay.log" 2>&1; then
    grep -v '^Executed ' "$work/replay.log" | tail -n 60
    input=$(grep '^Running: ' "$work/replay.log" | tail -n 1 | cut -d' ' -f2-)
    echo "run-fuzzer: FAILED: $target on $input" >&2
    echo "run-fuzzer: reproduce with: $fuzzer $input" >&2
    exit 1
  fi
  echo "run-fuzzer: $target: all ${#inputs[@]} inputs pass"
  ;;
run)
  mkdir -p "$work/corpus" "$work/findings"
  seeds=("$src/corpus")
  [ -d "$src/crashes" ] && seeds+=("$src/crashes")
  dict=()
  [ -f "$src/dict" ] && dict=(-dict="$src/dict")
  if ! "$fuzzer" "${common[@]}" "${dict[@]}" -max_total_time="$seconds" \
      -artifact_prefix="$work/findings/" ${QFUSE_FUZZ_FLAGS:-} \
      "$work/corpus" "${seeds[@]}"; then
    echo "run-fuzzer: FINDING in $target, saved under $work/findings/:" >&2
    ls -l "$work/findings" >&2
    echo "run-fuzzer: reproduce with: $fuzzer FILE; once fixed, copy FILE" \
         "to fuzz/$target/crashes/ (docs/fuzzing.md)" >&2
    exit 1
  fi
  ;;
*)
  echo "usage: $0 replay|run FUZZER SRC WORK [SECONDS]" >&2
  exit 2
  ;;
esac
