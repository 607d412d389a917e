# Shared pieces of a device round script (bench/results/<date>/rN.sh), which
# sources this file from the repository root on the GPU machine:
#
#   . bench/round-lib.sh
#   round_start RES OUT_ARCHIVE [BUDGET]   # deadline, result folder, archive name
#   round_build_bench                       # qfuse-bench of the carried tree
#   round_run DIR NAME ARGS...              # one qfuse-bench process, in DIR,
#                                           # its JSON and log in RES/$round_sub
#   round_checks_not_ok                     # checks outside "ok" in the logs
#
# round_run skips a run when under 20 s are left, gives it the time that is
# left, records name, exit code and seconds in its folder's manifest.tsv, and
# archives RES after every run, so a call cut short still returns results.

round_start() { # result folder, archive file name, budget seconds
  round_res=$1 round_archive=$2
  round_deadline=$(( $(date +%s) + ${3:-480} ))
  round_out="${OUT:-$PWD/gpu-out}"
  rm -rf "$round_res"; mkdir -p "$round_res" "$round_out"
  nvidia-smi -L > "$round_res/gpu.txt" 2>&1
}

round_left() { echo $(( round_deadline - $(date +%s) )); }

round_archive() {
  tar czf "$round_out/$round_archive" -C "$(dirname "$round_res")" \
    "$(basename "$round_res")"
}

round_build_bench() {
  local b=/tmp/qb-round
  { cmake -G Ninja -S . -B $b -DQFUSE_ENABLE_COMPILER=OFF \
      -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&
    cmake --build $b -j"$(nproc)" --target qfuse-bench; } \
    > "$round_res/build.log" 2>&1 ||
    { tail -30 "$round_res/build.log"; round_archive; return 1; }
  round_bench=$b/bin/qfuse-bench
}

round_run() { # dir (the run's paths are relative to it), name, arguments
  local dir=$1 name=$2; shift 2
  local r="$round_res/${round_sub:-.}"
  mkdir -p "$r"
  [ "$(round_left)" -lt 20 ] && { echo "skip $name"; return; }
  local t0; t0=$(date +%s)
  (cd "$dir" && timeout $(( $(round_left) - 5 )) "$round_bench" "$@" \
     --json "$r/$name.json") > "$r/$name.log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >> "$r/manifest.tsv"
  echo "$rc $name ($(( $(date +%s) - t0 )) s)"
  [ $rc -ne 0 ] && grep -E "FAIL|rror" "$r/$name.log" | head -3
  round_archive
}

round_checks_not_ok() {
  grep -rh "rel err" "$round_res" --include='*.log' | grep -vc " ok" |
    sed 's/^/checks not ok: /'
}
