"""`python3 -m qfuse tune`: a user's own tuning database, measured on their GPU.

For a model config, an encoding and the batch sizes it will run at:

1. the model's distinct linear shapes (q/k/v/o, gate and up fused with
   silu_mul as the compile's default fusion runs them, down, lm_head);
2. per (shape, batch) the candidate tilings, listed by the compiler
   (`qfuse-compile --list-tilings`: the one definition of the candidate
   space, the default first, the rest ranked, `--list-top` per kernel
   family);
3. one artifact per candidate, and a run of `qfuse-bench --check` per
   artifact (checked against the C++ reference, timed against cuBLAS fp16
   in the same process);
4. the fastest candidate whose checks pass, per (shape, batch), into a JSON
   database in the format of bench/tuning-db.json, merged into the output
   file's entries. Compiles of that model pick it up (tools.py,
   `--tuning-db auto`).

Where qfuse-bench and a CUDA device are both here, steps 3 and 4 run now.
Elsewhere step 3 is prepared: WORK/ holds the artifacts, manifest.json,
runs.txt and run.sh (the exact qfuse-bench commands, within a time budget),
and `tune --select RESULTS` reads the results back.
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from .encodings import EncodingError, encoding_text, is_quantized
from .tools import (CHIPS, USER_TUNING_DB, ToolError, find_tool, merge_tuning_entries,
                    read_tuning_db)

MANIFEST = "manifest.json"
RUNS = "runs.txt"
SCRIPT = "run.sh"
RESULTS_ARCHIVE = "tune-results.tgz"
DEFAULT_TOP = 8
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


class TuneError(ValueError):
    """Bad input to `tune`, or results it cannot use; the message says which."""


# ---------------------------------------------------------------------------
# Shapes


def linear_shapes(cfg):
    """The distinct linear launches of one decode step of `cfg`, as the
    default compile runs them: [{"name", "kinds", "n", "k", "gated"}], where
    n is the tuning database's key (2 x intermediate for gate and up, which
    the default --fuse runs as one silu_mul matmul)."""
    shapes, seen = [], {}
    by_kind = {kind: (n, k) for kind, n, k in cfg.projections()}
    if "gate_proj" in by_kind and by_kind.get("up_proj") == by_kind["gate_proj"]:
        n, k = by_kind["gate_proj"]
        shapes.append({"name": "gate_up", "kinds": ["gate_proj", "up_proj"],
                       "n": 2 * n, "k": k, "weight_n": n, "gated": True})
        seen[(2 * n, k)] = shapes[-1]
    for kind, n, k in cfg.projections():
        if kind in ("gate_proj", "up_proj") and shapes and shapes[0]["gated"]:
            continue
        if (n, k) in seen:
            if kind not in seen[(n, k)]["kinds"]:
                seen[(n, k)]["kinds"].append(kind)
            continue
        shapes.append({"name": kind, "kinds": [kind], "n": n, "k": k,
                       "weight_n": n, "gated": False})
        seen[(n, k)] = shapes[-1]
    return shapes


def parse_batch_sizes(text):
    """'1,8,16' -> [1, 8, 16]; TuneError naming a bad entry."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        try:
            value = int(part)
        except ValueError:
            raise TuneError(f"--batch-sizes {text!r}: {part!r} is not a number; expected "
                            "positive batch sizes such as 1,8,16") from None
        if value <= 0:
            raise TuneError(f"--batch-sizes {text!r}: {value} is not positive; expected "
                            "positive batch sizes such as 1,8,16")
        if value not in out:
            out.append(value)
    return out


# ---------------------------------------------------------------------------
# Candidates (from the compiler)

_LINE = re.compile(r"^#qf\.tiling<(?P<tiling>.*)>\s+// m = (?P<m>\d+), (?P<kernel>\w+)"
                   r"(?:, (?P<us>[0-9.]+) us predicted)?(?P<default>, default)?$")


def weight_type(n, k, enc_text):
    return f"!qf.weight<{n}x{k}, #qf.enc<{enc_text}>>"


def list_tilings(n, k, enc_text, batches, chip="sm_90", top=DEFAULT_TOP, gated=False,
                 extra=()):
    """The compiler's candidates for an N x K weight (N: one weight's rows;
    gated: gate and up of N rows each) at each batch: {m: [{"tiling",
    "kernel", "predicted_us", "default", "rank"}]} in the listing's order."""
    tool = find_tool("qfuse-compile")
    argv = [tool, f"--list-tilings={weight_type(n, k, enc_text)}",
            "--batch-sizes=" + ",".join(str(b) for b in batches), f"--chip={chip}",
            f"--list-top={top}"] + (["--list-gated"] if gated else []) + list(extra)
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        if "Unknown command line argument '--list-tilings" in proc.stderr:
            raise ToolError(f"{tool} has no --list-tilings (built before it); rebuild "
                            "qfuse-compile or point QFUSE_COMPILE / QFUSE_BUILD_DIR at a "
                            "newer build")
        raise ToolError(f"qfuse-compile --list-tilings failed (exit {proc.returncode}): "
                        f"{' '.join(shlex.quote(a) for a in argv)}\n{proc.stderr.strip()}")
    out = {m: [] for m in batches}
    for line in proc.stdout.splitlines():
        if not line.strip() or line.startswith("//"):
            continue
        match = _LINE.match(line)
        if not match:
            raise ToolError(f"qfuse-compile --list-tilings: cannot read the line {line!r}")
        m = int(match["m"])
        out[m].append({"tiling": match["tiling"], "kernel": match["kernel"],
                       "predicted_us": float(match["us"]) if match["us"] else None,
                       "default": bool(match["default"]), "rank": len(out[m])})
    return out


def tiling_label(tiling):
    """A short file-name label of a tiling body: n8u2s1 (matvec; v8 when
    vec_bytes is not 16), M16N128S2K64T4C1 (mma, bench/tune.py's labels),
    W64... (wgmma), D (dequant_gemm)."""
    kernel, _, rest = tiling.partition(",")
    fields = {"block_m": 1, "block_n": 1, "block_k": 0, "vec_bytes": 16, "k_unroll": 1,
              "split_k": 1, "stages": 1, "cluster_k": 1}
    for item in rest.split(","):
        if "=" in item:
            key, value = (s.strip() for s in item.split("="))
            fields[key] = int(value)
    kernel = kernel.strip()
    f = fields
    if kernel == "matvec":
        return (f"n{f['block_n']}u{f['k_unroll']}s{f['split_k']}"
                + (f"v{f['vec_bytes']}" if f["vec_bytes"] != 16 else ""))
    if kernel in ("mma", "wgmma"):
        return (("W" if kernel == "wgmma" else "M")
                + f"{f['block_m']}N{f['block_n']}S{f['split_k']}K{f['block_k']}"
                  f"T{f['stages']}C{f['cluster_k']}")
    if kernel == "dequant_gemm":
        return "D"
    return re.sub(r"[^A-Za-z0-9]+", "_", tiling)


def variant_ir(batch, n, k, enc_text, tiling, gated=False, name="w"):
    """One qf.fused_matmul of `tiling` (gated: gate and up weights of N rows
    each with the silu_mul epilogue). The weight names carry `name`, so that
    qfuse-bench's checks name the candidate."""
    w = f"!qf.weight<{n}x{k}, #qf.enc<{enc_text}>>"
    up = f" up(%u : {w})" if gated else ""
    act = ", activation = #qf<activation silu_mul>" if gated else ""
    return (f"func.func @v(%x: tensor<{batch}x{k}xf16>) -> tensor<{batch}x{n}xf16> {{\n"
            f"  %w = qf.weight_ref \"{name}\" : {w}\n"
            + (f"  %u = qf.weight_ref \"{name}.up\" : {w}\n" if gated else "") +
            f"  %y = qf.fused_matmul %x, %w{up} {{tiling = #qf.tiling<{tiling}>{act}}}"
            f" : tensor<{batch}x{k}xf16>, {w} -> tensor<{batch}x{n}xf16>\n"
            f"  return %y : tensor<{batch}x{n}xf16>\n}}\n")


# ---------------------------------------------------------------------------
# Prepare


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


# ---------------------------------------------------------------------------
# Measure (a GPU here)


def gpu_problem():
    """Why the measurements cannot run here (no qfuse-bench, no device), or
    None. The device check is the one `quantize` uses."""
    try:
        find_tool("qfuse-bench")
    except ToolError as e:
        return str(e).split(";")[0]
    from .quantizer import gpu_problem as device_problem
    return device_problem()


def run_all(work, results, budget_s=DEFAULT_BUDGET_S, device=None, log=None):
    """Runs the manifest's qfuse-bench commands here, in order, within the
    budget; the same commands as run.sh. Returns (ran, failed, not run)."""
    log = log or (lambda text: None)
    with open(os.path.join(work, MANIFEST)) as f:
        manifest = json.load(f)
    bench = find_tool("qfuse-bench")
    os.makedirs(results, exist_ok=True)
    for name in (MANIFEST, RUNS):
        with open(os.path.join(work, name)) as src, \
                open(os.path.join(results, name), "w") as dst:
            dst.write(src.read())
    start = time.time()
    ran = failed = skipped = 0
    tsv = [("run", "exit", "seconds")]
    for i, r in enumerate(manifest["runs"]):
        left = budget_s - (time.time() - start) if budget_s else 86400
        need = r.get("estimated_s", 0) * 1.25 + 5
        if need > left:
            tsv.append((r["name"], f"not run (budget: {left:.0f} s left, {need:.0f} s "
                        "needed)", "-"))
            skipped += 1
            continue
        argv = [bench] + r["argv"] + (["--device", str(device)] if device is not None
                                      else []) + ["--json",
                                                  os.path.join(results, r["name"] + ".json")]
        t0 = time.time()
        with open(os.path.join(results, r["name"] + ".log"), "w") as out:
            try:
                rc = subprocess.run(argv, cwd=work, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=max(1, left - 2)).returncode
            except subprocess.TimeoutExpired:
                rc = 124
        tsv.append((r["name"], str(rc), str(round(time.time() - t0))))
        ran += 1
        failed += rc != 0
        log(f"[{i + 1}/{len(manifest['runs'])}] {r['name']}: "
            + ("ok" if rc == 0 else f"FAILED (exit {rc})"))
    with open(os.path.join(results, "runs.tsv"), "w") as f:
        for row in tsv:
            f.write("\t".join(row) + "\n")
    return ran, failed, skipped


# ---------------------------------------------------------------------------
# Select


def _open_results(path, tmp):
    """A results folder, or a .tgz of one (unpacked into `tmp`): the folder
    holding manifest.json."""
    if os.path.isfile(path) and tarfile.is_tarfile(path):
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                if member.name.startswith("/") or ".." in member.name.split("/"):
                    raise TuneError(f"{path}: unsafe member {member.name!r}")
                if not (member.isfile() or member.isdir()):
                    raise TuneError(f"{path}: unexpected member {member.name!r}")
            tar.extractall(tmp)
        path = tmp
    if not os.path.isdir(path):
        raise TuneError(f"--select {path}: no such folder or .tgz")
    found = [d for d, _, files in os.walk(path) if MANIFEST in files]
    if not found:
        raise TuneError(f"--select {path}: no {MANIFEST} there; expected the results "
                        f"folder that run.sh wrote (it copies {MANIFEST} beside the "
                        "qfuse-bench JSON)")
    if len(found) > 1:  # e.g. the prepared folder and its results: the results
        found = [d for d in found if os.path.isfile(os.path.join(d, "runs.tsv"))] or found
    if len(found) > 1:
        raise TuneError(f"--select {path}: several results folders ({', '.join(found)}); "
                        "name one")
    return found[0]


def _run_status(results):
    """{run: exit code or why it did not run} from runs.tsv, where there is one."""
    path = os.path.join(results, "runs.tsv")
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    return {row[0]: row[1] for row in rows[1:] if len(row) >= 2}


def _measurement(results, cand, status=None):
    """(us, cublas us, None) for a candidate whose run passed its checks, or
    (None, None, why not)."""
    path = os.path.join(results, cand["name"] + ".json")
    if not os.path.isfile(path):
        if (status or {}).get(cand["name"], "").startswith("not run"):
            return None, None, status[cand["name"]]
        log = os.path.join(results, cand["name"] + ".log")
        if os.path.isfile(log):
            with open(log, errors="replace") as f:
                tail = [l.strip() for l in f.read().splitlines() if l.strip()]
            return None, None, "no result: " + (tail[-1] if tail else "empty log")
        return None, None, "not run"
    try:
        with open(path) as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        return None, None, f"unreadable result {path}: {e}"
    # One artifact per run: every check of the run is this candidate's.
    checks = run.get("checks", [])
    if not checks:
        return None, None, "no check ran (qfuse-bench --check)"
    bad = [c for c in checks if not c.get("passed")]
    if bad:
        c = bad[0]
        return None, None, (f"check FAILED ({c.get('kernel', '?')}: relative error "
                            f"{c.get('relative_error', float('nan')):.2e}"
                            + (", unwritten outputs" if c.get("unwritten") else "") + ")")
    plans = [p for p in run.get("artifact_plans", []) if p.get("batch") == cand["m"]]
    if not plans:
        return None, None, f"no timing of batch {cand['m']}"
    us = plans[0]["stats"]["median_ms"] * 1e3
    cublas = [g["stats"]["median_ms"] * 1e3 for g in run.get("cublas", [])]
    return us, (min(cublas) if cublas else None), None


def best_entries(measured, chip):
    """Database entries from `measured` [(key (m, n, k, encoding), tiling,
    kernel, us)]: the fastest per key for every target, and where the chip
    is sm_90a and a wgmma tiling (which runs there only) beats every other,
    an entry for sm_90a (bench/tune.py select's rule)."""
    best, best_arch = {}, {}
    for key, tiling, kernel, us in measured:
        if kernel != "wgmma" and (key not in best or us < best[key][0]):
            best[key] = (us, tiling)
        if key not in best_arch or us < best_arch[key][0]:
            best_arch[key] = (us, tiling)
    db = [{"m": m, "n": n, "k": k, "encoding": enc, "tiling": t,
           "measured_us": round(us, 3)}
          for (m, n, k, enc), (us, t) in sorted(best.items())]
    if chip == "sm_90a":
        db += [{"m": m, "n": n, "k": k, "encoding": enc, "tiling": t,
                "measured_us": round(us, 3), "chip": "sm_90a"}
               for (m, n, k, enc), (us, t) in sorted(best_arch.items())
               if t.startswith("wgmma")]
    return db


def select(results_path, out=None, replace=False, log=None):
    """Reads run.sh's (or run_all's) results, writes the database of the
    fastest passing candidate per (shape, batch) to `out` (default: the
    output named when the candidates were prepared), merged into its
    entries unless `replace`. Returns (out path, entries written, report
    lines, the manifest)."""
    log = log or (lambda text: None)
    with tempfile.TemporaryDirectory(prefix="qfuse-tune-") as tmp:
        results = _open_results(results_path, tmp)
        with open(os.path.join(results, MANIFEST)) as f:
            manifest = json.load(f)
        out = out or manifest.get("out")
        if not out:
            raise TuneError("no --out: the candidates were prepared without one; name "
                            "the database to write")
        rows, measured, problems = {}, [], []
        status = _run_status(results)
        for cand in manifest["candidates"]:
            us, cublas, why = _measurement(results, cand, status)
            key = (cand["m"], cand["n"], cand["k"], cand["encoding"])
            row = rows.setdefault(key, {"shape": cand["shape"], "best": None,
                                        "default": None, "cublas": [], "measured": 0,
                                        "candidates": 0})
            row["candidates"] += 1
            if why:
                problems.append(f"{cand['name']}: {why}")
                continue
            row["measured"] += 1
            if cublas:
                row["cublas"].append(cublas)
            measured.append((key, cand["tiling"], cand["kernel"], us))
            if cand["default"]:
                row["default"] = us
            if cand["kernel"] != "wgmma" or manifest["chip"] == "sm_90a":
                if row["best"] is None or us < row["best"][0]:
                    row["best"] = (us, cand["tiling"])
    new = best_entries(measured, manifest["chip"])
    if not new:
        raise TuneError(f"--select {results_path}: no candidate was measured with passing "
                        "checks; nothing to write (" + "; ".join(problems[:3]) + ")")
    existing = []
    if os.path.exists(out) and not replace:
        existing = read_tuning_db(out)
    entries = merge_tuning_entries(new, existing)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")
    report = [f"{'shape':10s} {'m':>4s} {'n':>7s} {'k':>6s} {'ok/all':>6s} {'best us':>9s} "
              f"{'default':>9s} {'cuBLAS':>9s} {'x fp16':>7s}  tiling"]
    for (m, n, k, _), row in sorted(rows.items(), key=lambda kv: (kv[1]["shape"], kv[0])):
        best = row["best"]
        cublas = min(row["cublas"]) if row["cublas"] else None

        def num(x):
            return f"{x:9.2f}" if x is not None else f"{'-':>9s}"
        speed = f"{cublas / best[0]:7.2f}" if best and cublas else f"{'-':>7s}"
        report.append(f"{row['shape']:10s} {m:4d} {n:7d} {k:6d} "
                      f"{row['measured']:>3d}/{row['candidates']:<2d} "
                      f"{num(best[0] if best else None)} {num(row['default'])} {num(cublas)} "
                      f"{speed}  {best[1] if best else 'none measured'}")
    if problems:
        report.append(f"{len(problems)} candidate(s) not used:")
        report += ["  " + p for p in problems]
    report.append(f"wrote {len(new)} measured entries to {out} ({len(entries)} in all"
                  + (f", {len(existing)} there before" if existing else "") + ")")
    return out, new, report, manifest


def default_database(config_path):
    """Where `tune` writes for a model, and compiles of it look: beside its
    config.json."""
    return os.path.join(os.path.dirname(os.path.abspath(config_path)), USER_TUNING_DB)


__all__ = ["TuneError", "best_entries", "default_database", "gpu_problem",
           "linear_shapes", "list_tilings", "parse_batch_sizes", "prepare", "run_all", "select", "tiling_label",
           "variant_ir"]
