"""`tune`'s work folder: the candidates compiled into WORK/artifacts, and
manifest.json, runs.txt and run.sh (the qfuse-bench commands within a time
budget) that the measurements and `--select` read."""
import glob
import json
import os
import shlex
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

from .encodings import EncodingError, encoding_text, is_quantized
from .tools import CHIPS, find_tool
from .tune_candidates import (DEFAULT_TOP, TuneError, linear_shapes, list_tilings,
                              tiling_label, variant_ir)

MANIFEST = "manifest.json"
RUNS = "runs.txt"
SCRIPT = "run.sh"
RESULTS_ARCHIVE = "tune-results.tgz"
DEFAULT_BUDGET_S = 600
# What one checked qfuse-bench run costs, measured on the H200 zoo round
# (bench/zoo/zoo.py COST): the host quantizes random weights and checks every
# launch against the C++ reference, which dominates on large weights.
RUN_COST = {
    "process_s": 1.3,                  # process, CUDA start, copy, timings
    "quantize_weights_per_s": 12e6,    # per weight, one core each
    "dequantize_weights_per_s": 36e6,  # per weight per checked batch
    "reference_macs_per_s": 8e9,       # all cores
    "per_batch_s": 0.02,               # plan + cuBLAS timings
}



def run_seconds(cand, cost=RUN_COST):
    """The estimated seconds of one candidate's checked run."""
    weights = cand["n"] * cand["k"]            # gate and up together when gated
    largest = weights // 2 if cand["gated"] else weights
    return (cost["process_s"] + largest / cost["quantize_weights_per_s"]
            + weights / cost["dequantize_weights_per_s"]
            + cand["m"] * weights / cost["reference_macs_per_s"] + cost["per_batch_s"])


def _compile_one(tool, src, out, chip):
    proc = subprocess.run([tool, src, "-o", out, f"--chip={chip}", "--emit=artifact"],
                          capture_output=True, text=True)
    os.remove(src)
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if "error" in l] or \
            proc.stderr.splitlines() or [f"exit {proc.returncode}"]
        return lines[0].strip()
    return None


def prepare(cfg, config_path, encoding, batches, work, chip="sm_90", top=DEFAULT_TOP,
            budget_s=DEFAULT_BUDGET_S, out_db=None, jobs=None, log=None):
    """Writes WORK/: the candidates' artifacts, manifest.json, runs.txt and
    run.sh. Returns the manifest (a dict)."""
    log = log or (lambda text: None)
    if chip not in CHIPS:
        raise TuneError(f"--chip {chip}: expected one of {', '.join(CHIPS)}")
    try:
        enc_text = encoding_text(encoding)
    except EncodingError as e:
        raise TuneError(f"--encoding: {e}") from None
    if not is_quantized(enc_text):
        raise TuneError(f"--encoding {encoding}: {enc_text} weights are dense and run "
                        "cuBLAS; there is no kernel tiling to tune (choose a quantized "
                        "encoding, e.g. int4-g128)")
    shapes = linear_shapes(cfg)
    if not shapes:
        raise TuneError(f"{config_path}: the model has no linear layers to tune")
    if top < 0:
        raise TuneError(f"--top {top}: expected 0 (every candidate) or a positive number")
    if os.path.isdir(work) and os.listdir(work):
        if not os.path.isfile(os.path.join(work, MANIFEST)):
            raise TuneError(f"--work {work}: exists and is not a tune folder (no "
                            f"{MANIFEST}); choose an empty or new folder")
        # Candidates and results of an earlier preparation go.
        for old in glob.glob(os.path.join(work, "artifacts", "*.qfa")):
            os.remove(old)
        if os.path.isdir(os.path.join(work, "results")):
            shutil.rmtree(os.path.join(work, "results"))
    art_dir = os.path.join(work, "artifacts")
    os.makedirs(art_dir, exist_ok=True)

    tool = find_tool("qfuse-compile")
    candidates, skipped, jobs_list = [], [], []
    for shape in shapes:
        listing = list_tilings(shape["weight_n"], shape["k"], enc_text, batches, chip,
                               top, shape["gated"])
        for m in batches:
            if not listing[m]:
                skipped.append({"shape": shape["name"], "m": m,
                                "why": "the compiler lists no candidate"})
            for c in listing[m]:
                label = tiling_label(c["tiling"])
                name = f"{shape['name']}-b{m}-{label}"
                cand = {"name": name, "artifact": f"artifacts/{name}.qfa",
                        "shape": shape["name"], "kinds": shape["kinds"], "m": m,
                        "n": shape["n"], "k": shape["k"], "gated": shape["gated"],
                        "encoding": enc_text, "tiling": c["tiling"],
                        "kernel": c["kernel"], "predicted_us": c["predicted_us"],
                        "default": c["default"], "rank": c["rank"]}
                src = os.path.join(art_dir, name + ".mlir")
                with open(src, "w") as f:
                    f.write(variant_ir(m, shape["weight_n"], shape["k"], enc_text,
                                       c["tiling"], shape["gated"], name=name))
                jobs_list.append((cand, src))
    log(f"compiling {len(jobs_list)} candidate artifacts ({len(shapes)} shapes x "
        f"{len(batches)} batches, at most {top or 'all'} per kernel family)")
    workers = jobs or max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        errors = list(pool.map(
            lambda job: _compile_one(tool, job[1], os.path.join(work, job[0]["artifact"]),
                                     chip), jobs_list))
    for (cand, _), error in zip(jobs_list, errors):
        if error:
            skipped.append({"shape": cand["shape"], "m": cand["m"],
                            "tiling": cand["tiling"], "why": error})
        else:
            candidates.append(cand)
    if not candidates:
        raise TuneError("no candidate compiled: " + "; ".join(
            f"{s['shape']} b{s['m']}: {s['why']}" for s in skipped[:5]))
    # Runs in rank order across shapes and batches, the cheaper first within
    # a rank: a budget that runs out leaves every (shape, batch) with its
    # best-ranked candidates measured, and the large weights' lowest ranks
    # are what it drops.
    candidates.sort(key=lambda c: (c["rank"], run_seconds(c), batches.index(c["m"])))
    runs = []
    for c in candidates:
        argv = ["--artifact", c["artifact"], "--batch", str(c["m"]),
                "--gemm", f"{c['m']}x{c['n']}x{c['k']}", "--check"]
        runs.append({"name": c["name"], "estimated_s": round(run_seconds(c), 1),
                     "argv": argv})
    manifest = {
        "version": 1,
        "what": "python3 -m qfuse tune: candidate tilings of one model (docs/cost-model.md)",
        "config": os.path.abspath(config_path),
        "model": cfg.name,
        "encoding": encoding,
        "encoding_text": enc_text,
        "chip": chip,
        "batch_sizes": batches,
        "top": top,
        "budget_s": budget_s,
        "out": os.path.abspath(out_db) if out_db else None,
        "shapes": shapes,
        "candidates": candidates,
        "skipped": skipped,
        "runs": runs,
    }
    with open(os.path.join(work, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(work, RUNS), "w") as f:
        for r in runs:
            f.write(r["name"] + " " + " ".join(r["argv"]) + "\n")
    write_script(manifest, os.path.join(work, SCRIPT))
    return manifest


def write_script(manifest, path):
    """run.sh: every qfuse-bench command of the manifest, in order, each
    started only while the budget lasts; results (JSON + log per run, the
    manifest, runs.tsv) in RESULTS_DIR and, with $OUT set, archived as
    $OUT/tune-results.tgz after every run."""
    lines = [
        "#!/usr/bin/env bash",
        f"# qfuse tune: {len(manifest['runs'])} candidate runs of {manifest['model']} "
        f"({manifest['encoding']}, batches {','.join(map(str, manifest['batch_sizes']))}, "
        f"{manifest['chip']}), written by `python3 -m qfuse tune`.",
        "# On the GPU machine:  bash run.sh [RESULTS_DIR] [BUDGET_S]",
        "#   qfuse-bench: $QFUSE_BENCH, else PATH, else build-gpu/bin or build/bin of the",
        "#   current directory, else built there from the qfuse source (runtime only).",
        "# Then, on the compiler machine:",
        "#   python3 -m qfuse tune --select RESULTS_DIR (or tune-results.tgz) [--out DB]",
        "set -uo pipefail",
        'here="$(cd "$(dirname "$0")" && pwd)"',
        'results="${1:-$here/results}"',
        f'budget="${{2:-{manifest["budget_s"] or 0}}}"',
        'mkdir -p "$results" && results="$(cd "$results" && pwd)"',
        'start=$(date +%s)',
        'elapsed() { echo $(( $(date +%s) - start )); }',
        'archive() { [ -n "${OUT:-}" ] && mkdir -p "$OUT" && '
        f'tar czf "$OUT/{RESULTS_ARCHIVE}" -C "$(dirname "$results")" '
        '"$(basename "$results")"; return 0; }',
        'bench="${QFUSE_BENCH:-}"',
        '[ -z "$bench" ] && bench="$(command -v qfuse-bench || true)"',
        'for d in build-gpu build; do',
        '  [ -z "$bench" ] && [ -x "$d/bin/qfuse-bench" ] && bench="$PWD/$d/bin/qfuse-bench"',
        'done',
        'if [ -z "$bench" ] && [ -f runtime/tools/qfuse-bench.cpp ]; then',
        '  echo "building qfuse-bench (runtime only) into build-gpu"',
        '  { cmake -G Ninja -S . -B build-gpu -DQFUSE_ENABLE_COMPILER=OFF \\',
        '      -DQFUSE_TOKENIZER_ORACLE=OFF -DCMAKE_BUILD_TYPE=Release &&',
        '    cmake --build build-gpu -j"$(nproc)" --target qfuse-bench; } \\',
        '    > "$results/build.log" 2>&1 || { tail -30 "$results/build.log"; exit 1; }',
        '  bench="$PWD/build-gpu/bin/qfuse-bench"',
        'fi',
        '[ -n "$bench" ] || { echo "run.sh: no qfuse-bench (set QFUSE_BENCH, or run from '
        'the qfuse source)"; exit 1; }',
        f'cp "$here/{MANIFEST}" "$here/{RUNS}" "$results/"',
        'nvidia-smi -L > "$results/gpu.txt" 2>&1 || true',
        "printf 'run\\texit\\tseconds\\n' > \"$results/runs.tsv\"",
        'ran=0 failed=0 skipped=0',
        '# run NAME ESTIMATED_S ARGS: started only when the estimate (x1.25, + 5 s)',
        '# fits what is left of the budget (0: no budget).',
        'run() {',
        '  local name="$1" est="$2"; shift 2',
        '  local left=$(( budget > 0 ? budget - $(elapsed) : 86400 ))',
        '  local need=$(( ${est%.*} * 5 / 4 + 5 ))',
        '  if [ "$need" -gt "$left" ]; then',
        "    printf '%s\\tnot run (budget: %s s left, %s s needed)\\t-\\n' \"$name\" \"$left\" \"$need\" >> \"$results/runs.tsv\"",
        '    skipped=$((skipped + 1)); return',
        '  fi',
        '  local t0=$(date +%s)',
        '  (cd "$here" && timeout "$((left - 2))" "$bench" "$@" --json "$results/$name.json") \\',
        '    > "$results/$name.log" 2>&1',
        '  local rc=$?',
        "  printf '%s\\t%s\\t%s\\n' \"$name\" \"$rc\" \"$(( $(date +%s) - t0 ))\" >> \"$results/runs.tsv\"",
        '  ran=$((ran + 1))',
        '  if [ "$rc" -ne 0 ]; then failed=$((failed + 1)); echo "FAILED ($rc) $name"; '
        'grep -E "FAIL|error" "$results/$name.log" | head -3; fi',
        '  archive',
        '}',
        "",
    ]
    for r in manifest["runs"]:
        lines.append("run " + shlex.quote(r["name"]) + f" {r['estimated_s']} "
                     + " ".join(shlex.quote(a) for a in r["argv"]))
    lines += [
        "",
        'echo "qfuse tune: $ran runs ($failed failed), $skipped not run (budget), '
        'in $(elapsed) s; results in $results"',
        "archive",
        'echo "next, on the compiler machine: python3 -m qfuse tune --select '
        '$results${OUT:+ (or $OUT/' + RESULTS_ARCHIVE + ')}"',
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    os.chmod(path, 0o755)

