#!/usr/bin/env bash
# Compiles the sampled zoo runs (bench/zoo/plan.json) the default way a user
# compiles -- qfuse-compile --batch-sizes=<the 16 zoo batches>, no
# --tuning-db, default --chip and --fuse -- and writes the run list that
# bench/zoo/run-zoo.sh executes on the GPU machine.
#
#   bench/zoo/make-zoo-artifacts.sh [build dir] [plan.json] [out dir]
#   (defaults: build, bench/zoo/plan.json, .devcarry/zoo; JOBS=2 compiles;
#   CHIP=<--chip list>, default qfuse-compile's own: CHIP=sm_90a gives the
#   variant that the Python commands' artifact set runs on an H100/H200)
#
# Out dir gets: artifacts.txz (the .qfa files, xz: half gzip's size, and the
# device call carries at most 64 MiB with the tree), runs.txt (one line per run:
# name, estimated seconds, then the qfuse-bench arguments), compile.log,
# COMMIT, COMPILE (the exact compile command), and the zoo scripts, so that
# the folder alone is what the GPU machine needs besides the runtime source.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
plan="${2:-$here/plan.json}"
out="${3:-.devcarry/zoo}"
jobs="${JOBS:-2}"
chip="${CHIP:-}"
compile="$(cd "$build" && pwd)/bin/qfuse-compile"
batches="1,2,3,4,5,8,12,16,24,32,48,64,96,128,256,512"
[ -x "$compile" ] || { echo "no $compile" >&2; exit 1; }
rm -rf "$out/artifacts"
mkdir -p "$out/artifacts"
git -C "$(dirname "$compile")" rev-parse --short HEAD > "$out/COMMIT" 2>/dev/null ||
  echo unknown > "$out/COMMIT"
echo "qfuse-compile <entry>-<format>.mlir --batch-sizes=$batches -o <entry>-<format>.qfa" \
  "${chip:+--chip=$chip }(no --tuning-db, ${chip:+not }default --chip, default --fuse)" > "$out/COMPILE"
# The IR and the run lines, from the plan.
python3 - "$plan" "$out" "$here" <<'EOF'
import json, os, sys
plan, out, here = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, here)
import zoo
entries, _ = zoo.derive(zoo.load_models())
by_id = {e["id"]: e for e in entries}
runs = json.load(open(plan))["runs"]
seen = set()
with open(os.path.join(out, "runs.txt"), "w") as f:
    for r in runs:
        e = by_id[r["entry"]]
        name = f"{e['id']}-{r['format']}"
        if name not in seen:
            seen.add(name)
            with open(os.path.join(out, "artifacts", name + ".mlir"), "w") as m:
                m.write(zoo.emit(e, r["format"]))
        bs = r["batches"]
        gemms = " ".join(f"--gemm {b}x{e['n_total']}x{e['k']}" for b in bs)
        tag = "" if bs == zoo.BATCHES else "-b" + "_".join(map(str, bs))
        f.write(f"{name}{tag} {r['est_s']} --artifact {out}/artifacts/{name}.qfa "
                f"--batch {','.join(map(str, bs))} {gemms} --check\n")
print(f"{len(seen)} artifacts to compile, {len(runs)} runs")
EOF
: > "$out/compile.log"
# shellcheck disable=SC2016 # (expanded by the inner sh)
find "$out/artifacts" -name '*.mlir' -print0 | sort -z | xargs -0 -n 1 -P "$jobs" sh -c \
  'f="$3"; if "$0" "$f" --batch-sizes="$1" ${2:+--chip="$2"} -o "${f%.mlir}.qfa" > "${f%.mlir}.log" 2>&1;
   then echo "ok $f"; else echo "FAILED $f"; fi' "$compile" "$batches" "$chip" >> "$out/compile.log"
for f in "$out"/artifacts/*.log; do
  [ -s "$f" ] && { echo "== $(basename "$f" .log)"; cat "$f"; } >> "$out/compile-notes.log"
  rm -f "$f"
done
grep -c '^ok' "$out/compile.log" | sed 's/^/compiled: /'
grep '^FAILED' "$out/compile.log" || true
rm -f "$out/artifacts.tgz"
tar cf - -C "$out" artifacts | xz -T"$jobs" -6 > "$out/artifacts.txz"
echo "make-zoo-artifacts: $(du -sh "$out/artifacts" | cut -f1) of artifacts," \
  "$(du -sh "$out/artifacts.txz" | cut -f1) packed, in $out"
# Only the packed copy travels (run-zoo.sh unpacks it).
rm -rf "$out/artifacts"
cp "$here"/run-zoo.sh "$here"/zoo.py "$here"/models.json "$out/"
