"""`tune --select`: the results of the prepared runs read back (a folder or
tune-results.tgz), the fastest passing candidate per (shape, batch) merged
into the tuning database, and the report table."""
import json
import os
import tarfile
import tempfile

from .tools import merge_tuning_entries, read_tuning_db
from .tune_candidates import TuneError
from .tune_prepare import MANIFEST


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
