#!/usr/bin/python3
"""Summarizes a zoo round (bench/zoo/run-zoo.sh): speedup of every checked
qfuse plan over cuBLAS fp16 measured in the same process, per (format,
batch), split into large (>= 8M weights per launch) and small shapes.

    /usr/bin/python3 bench/zoo/summarize.py RESULTS_DIR

RESULTS_DIR holds the round's zoo/ folder (zoo.tgz unpacked: <run>.json,
<run>.log, manifest.tsv, runs.txt). Writes into RESULTS_DIR: table.md,
summary.json, speedup.png (matplotlib, from Debian's python3-matplotlib:
hence /usr/bin/python3) and per-run.csv. A speedup counts only where every
check of that plan and batch passed; failures are listed, never averaged in.
Beside the speedups: the fraction of the copy bandwidth each format reaches
at batch 1 on the large shapes (issue 18's target is 92%), and each
table format's speed against int4-g128 at the same shape and batch (issue
18's target: within 15%).
"""
import csv
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo  # noqa: E402


def split_name(name):
    """'<entry>-<format>[-b...]' -> (entry, format)."""
    base = re.sub(r"-b[0-9_]+$", "", name)
    for fmt in sorted(zoo.FORMAT_NAMES, key=len, reverse=True):
        if base.endswith("-" + fmt):
            return base[: -len(fmt) - 1], fmt
    raise ValueError(f"run name {name!r} has no known format suffix")


def load_rows(zdir, entries):
    rows, failures, broken = [], [], []
    manifest = {}
    mpath = os.path.join(zdir, "manifest.tsv")
    if os.path.exists(mpath):
        with open(mpath) as f:
            for line in f.read().splitlines()[1:]:
                parts = line.split("\t")
                manifest[parts[0]] = parts[1:]
    for name in sorted(manifest):
        status = manifest[name][0]
        jpath = os.path.join(zdir, name + ".json")
        if not status.isdigit():
            continue  # not run (budget)
        if not os.path.exists(jpath):
            broken.append({"run": name, "exit": status,
                           "log_tail": _tail(os.path.join(zdir, name + ".log"))})
            continue
        with open(jpath) as f:
            data = json.load(f)
        entry_id, fmt = split_name(name)
        e = entries[entry_id]
        cublas = {(c["m"], c["label"]): c for c in data.get("cublas", [])}
        copy = data["copy"]["gb_per_s"]
        for p in data.get("artifact_plans", []):
            b = p["batch"]
            label = f"{b}x{e['n_total']}x{e['k']}"
            c = cublas.get((b, label))
            checks = [k for k in data.get("checks", []) if k["m"] == b]
            ok = bool(checks) and all(k["passed"] for k in checks)
            worst = max((k["relative_error"] for k in checks), default=None)
            row = {"run": name, "entry": entry_id, "kind": e["kind"],
                   "size": e["size"], "weights": e["weights"], "n": e["n_total"],
                   "k": e["k"], "format": fmt, "batch": b,
                   "qfuse_us": p["stats"]["median_ms"] * 1e3,
                   "cublas_us": c["stats"]["median_ms"] * 1e3 if c else None,
                   "speedup": (c["stats"]["median_ms"] / p["stats"]["median_ms"]
                               if c else None),
                   "qfuse_gb_per_s": p["gb_per_s"],
                   "fraction_of_copy": p["fraction_of_copy"],
                   "copy_gb_per_s": copy, "kernels": p["steps"],
                   "checks": len(checks), "check_passed": ok,
                   "worst_rel_err": worst, "used_by": e["used_by"],
                   "command": data["command"]}
            rows.append(row)
            if not ok:
                failures.append({k: row[k] for k in ("run", "batch", "checks",
                                                     "worst_rel_err")})
    return rows, failures, broken, manifest


def _tail(path, n=5):
    try:
        with open(path) as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


def mark_core(rows, entries):
    """The core sample: shapes measured in every format their K allows, at
    all 16 batches (whole waves). Spot checks and the part of a wave that
    the time budget cut are 'extra': listed, but left out of the cells so
    that every format's cells hold the same shapes."""
    have = {}
    for r in rows:
        have.setdefault(r["entry"], {}).setdefault(r["format"], set()).add(r["batch"])
    core = set()
    for eid, fmts in have.items():
        valid = [f for f, why in zoo.format_validity(entries[eid]).items() if not why]
        if all(fmts.get(f, set()) >= set(zoo.BATCHES) for f in valid):
            core.add(eid)
    for r in rows:
        r["core"] = r["entry"] in core
    return core


def stats(values):
    if not values:
        return None
    return {"n": len(values), "min": min(values),
            "median": statistics.median(values), "max": max(values)}


def summarize(rows):
    """{format: {batch: {size: stats + worst shape}}} over checked rows."""
    out = {}
    for fmt in zoo.FORMAT_NAMES:
        out[fmt] = {}
        for b in zoo.BATCHES:
            cell = {}
            for size in ("large", "small"):
                sel = [r for r in rows if r["format"] == fmt and r["batch"] == b
                       and r["size"] == size and r["check_passed"]
                       and r["speedup"] is not None and r["core"]]
                s = stats([r["speedup"] for r in sel])
                if s:
                    worst = min(sel, key=lambda r: r["speedup"])
                    s["worst_shape"] = worst["entry"]
                    s["shapes"] = sorted(r["entry"] for r in sel)
                cell[size] = s if s else "not measured"
            out[fmt][str(b)] = cell
    return out


def batch1_bandwidth(rows):
    """{format: stats of the fraction of copy bandwidth at batch 1 over the
    checked large shapes (core and extra runs)}: issue 18's target is 92%."""
    out = {}
    for fmt in zoo.FORMAT_NAMES:
        sel = [r for r in rows if r["format"] == fmt and r["batch"] == 1
               and r["size"] == "large" and r["check_passed"]]
        s = stats([r["fraction_of_copy"] for r in sel])
        if s:
            s["best_shape"] = max(sel, key=lambda r: r["fraction_of_copy"])["entry"]
        out[fmt] = s if s else "not measured"
    return out


# The formats issue 18 holds to int4-g128's speed (within 15%).
TABLE_FORMATS = ("nf4", "nvfp4", "mxfp4")


def relative_to_int4(rows):
    """{format: {batch: {size: stats}}} of speedup(format) / speedup(int4-g128)
    at the same shape and batch, over the checked core rows: each speedup is
    against cuBLAS in its own process, so the ratio is free of the two runs'
    clocks. 1.0 is int4's speed; the target is >= 0.85."""
    int4 = {(r["entry"], r["batch"]): r["speedup"] for r in rows
            if r["format"] == "int4-g128" and r["check_passed"] and r["speedup"]}
    out = {}
    for fmt in TABLE_FORMATS:
        out[fmt] = {}
        for b in zoo.BATCHES:
            cell = {}
            for size in ("large", "small"):
                sel = [r["speedup"] / int4[(r["entry"], b)] for r in rows
                       if r["format"] == fmt and r["batch"] == b
                       and r["size"] == size and r["check_passed"]
                       and r["speedup"] and r["core"]
                       and (r["entry"], b) in int4]
                cell[size] = stats(sel) or "not measured"
            out[fmt][str(b)] = cell
    return out


def fmt_cell(s):
    if not isinstance(s, dict):
        return "-"
    return f"{s['median']:.2f} ({s['min']:.2f}) n{s['n']}"


def write_table(path, summary, bandwidth, relative, rows, failures, broken,
                manifest, meta):
    entries_w = {r["entry"]: r["weights"] for r in rows}
    lines = [f"# Zoo round: {meta['title']}", ""]
    lines += [f"{meta['checked_plans']} plans checked and timed ({meta['passed']} "
              f"passed every check, worst relative error {meta['worst_err']:.2e}); "
              f"{len(meta['shapes'])} shapes; {meta['runs_done']} of "
              f"{meta['runs_listed']} runs done, {meta['runs_not_run']} not run "
              "(time budget)."]
    for sz in ("large", "small"):
        lines += ["", f"Core {sz} shapes (every format its K allows, all 16 batches): "
                  + ", ".join(f"{e} ({entries_w[e] / 1e6:.1f}M)"
                              for e in meta["core_shapes"][sz])]
    lines += ["", "Cells: median speedup over cuBLAS fp16 (min) and the number of "
              "shapes, over the core shapes. '-': not measured.", ""]
    for size in ("large", "small"):
        title = ("large shapes (>= 8M weights per launch)" if size == "large"
                 else "small shapes (< 8M weights per launch)")
        lines += [f"## {title}", ""]
        lines.append("| format | " + " | ".join(f"b{b}" for b in zoo.BATCHES) + " |")
        lines.append("|---|" + "---|" * len(zoo.BATCHES))
        for fmt in zoo.FORMAT_NAMES:
            lines.append(f"| {fmt} | " + " | ".join(
                fmt_cell(summary[fmt][str(b)][size]) for b in zoo.BATCHES) + " |")
        lines.append("")
    lines += ["## Batch 1: the fraction of the copy bandwidth (large shapes)", "",
              "Weight and buffer bytes a plan reads over its time, against the "
              "device copy measured in the same process (target: >= 92%).", "",
              "| format | median | min | max (shape) | shapes |", "|---|---|---|---|---|"]
    for fmt, s in bandwidth.items():
        if isinstance(s, dict):
            lines.append(f"| {fmt} | {100 * s['median']:.1f}% | {100 * s['min']:.1f}% | "
                         f"{100 * s['max']:.1f}% ({s['best_shape']}) | {s['n']} |")
        else:
            lines.append(f"| {fmt} | - | - | - | 0 |")
    lines.append("")
    lines += ["## Table formats against int4-g128 (same shape and batch)", "",
              "speedup(format) / speedup(int4-g128), each against cuBLAS fp16 in "
              "its own process: median (min) and shapes (target: >= 0.85).", ""]
    for size in ("large", "small"):
        lines.append(f"| {size} | " + " | ".join(f"b{b}" for b in zoo.BATCHES) + " |")
        lines.append("|---|" + "---|" * len(zoo.BATCHES))
        for fmt in TABLE_FORMATS:
            lines.append(f"| {fmt} | " + " | ".join(
                fmt_cell(relative[fmt][str(b)][size]) for b in zoo.BATCHES) + " |")
        lines.append("")
    extra = [r for r in rows if not r["core"]]
    if extra:
        lines += ["## Extra runs (not in the cells: spot checks of bigger shapes, "
                  "the part of a wave the budget cut)", "",
                  "| run | weights | batch | qfuse us | cuBLAS us | speedup | % of copy |",
                  "|---|---|---|---|---|---|---|"]
        for r in sorted(extra, key=lambda r: (r["run"], r["batch"])):
            lines.append(f"| {r['run']} | {r['weights'] / 1e6:.1f}M | {r['batch']} | "
                         f"{r['qfuse_us']:.2f} | {r['cublas_us']:.2f} | "
                         f"{r['speedup']:.2f}x | {100 * r['fraction_of_copy']:.1f}% |")
        lines.append("")
    lines += ["## Every plan", "",
              "| run | batch | qfuse us | cuBLAS us | speedup | % of copy | check |",
              "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["format"], r["size"], r["weights"],
                                         r["entry"], r["batch"])):
        sp = f"{r['speedup']:.2f}x" if r["speedup"] else "-"
        cu = f"{r['cublas_us']:.2f}" if r["cublas_us"] else "-"
        ck = (f"ok {r['worst_rel_err']:.1e}" if r["check_passed"]
              else f"FAIL {r['worst_rel_err']}")
        lines.append(f"| {r['run']} | {r['batch']} | {r['qfuse_us']:.2f} | {cu} | "
                     f"{sp} | {100 * r['fraction_of_copy']:.1f}% | {ck} |")
    if failures or broken:
        lines += ["", "## Failures", ""]
        for f in failures:
            lines.append(f"- check failed: {f}")
        for b in broken:
            lines.append(f"- run {b['run']} exited {b['exit']} without JSON: "
                         + " / ".join(b["log_tail"]))
    not_run = [n for n, v in manifest.items() if not v[0].isdigit()]
    if not_run:
        lines += ["", "## Not run (time budget)", "", ", ".join(sorted(not_run))]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(path, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("summarize: matplotlib missing (apt-get install python3-matplotlib; "
              "run with /usr/bin/python3): no plot")
        return False
    fig, axes = plt.subplots(3, 3, figsize=(15, 12), sharex=True, sharey=True)
    colors = {"large": "tab:blue", "small": "tab:orange"}
    for ax, fmt in zip(axes.flat, zoo.FORMAT_NAMES):
        for size in ("large", "small"):
            xs, med, lo, hi = [], [], [], []
            for b in zoo.BATCHES:
                v = [r["speedup"] for r in rows if r["format"] == fmt and
                     r["batch"] == b and r["size"] == size and r["check_passed"]
                     and r["speedup"] and r["core"]]
                if v:
                    xs.append(b)
                    med.append(statistics.median(v))
                    lo.append(min(v))
                    hi.append(max(v))
            if xs:
                ax.plot(xs, med, "o-", color=colors[size], ms=3,
                        label=f"{size} median")
                ax.fill_between(xs, lo, hi, color=colors[size], alpha=0.2,
                                label=f"{size} min-max")
        extra = [r for r in rows if r["format"] == fmt and not r["core"]
                 and r["check_passed"] and r["speedup"]]
        if extra:
            ax.plot([r["batch"] for r in extra], [r["speedup"] for r in extra],
                    "x", color="tab:red", ms=5, label="extra (spot, cut wave)")
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(zoo.BATCHES)
        ax.set_xticklabels([str(b) for b in zoo.BATCHES], fontsize=6, rotation=90)
        ticks = [0.0625, 0.125, 0.25, 0.5, 1, 2, 4]
        ax.set_yticks(ticks)
        ax.set_yticklabels([f"{t:g}x" for t in ticks])
        ax.set_title(fmt)
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("batch (M)")
    for ax in axes[:, 0]:
        ax.set_ylabel("speedup over cuBLAS fp16")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("qfuse default compile (no tuning database, sm_90) on the zoo, "
                 "H200: speedup vs batch, spread across shapes")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rdir = sys.argv[1]
    zdir = os.path.join(rdir, "zoo")
    entries, _ = zoo.derive(zoo.load_models())
    entries = {e["id"]: e for e in entries}
    rows, failures, broken, manifest = load_rows(zdir, entries)
    core = mark_core(rows, entries)
    summary = summarize(rows)
    bandwidth = batch1_bandwidth(rows)
    relative = relative_to_int4(rows)
    errs = [r["worst_rel_err"] for r in rows if r["worst_rel_err"] is not None]
    meta = {"title": os.path.basename(os.path.normpath(rdir)),
            "checked_plans": len(rows),
            "passed": sum(r["check_passed"] for r in rows),
            "worst_err": max(errs) if errs else float("nan"),
            "shapes": sorted({r["entry"] for r in rows}),
            "core_shapes": {sz: sorted(e for e in core if entries[e]["size"] == sz)
                            for sz in ("large", "small")},
            "extra_runs": sorted({r["run"] for r in rows if not r["core"]}),
            "runs_listed": len(manifest),
            "runs_done": sum(v[0].isdigit() for v in manifest.values()),
            "runs_not_run": sum(not v[0].isdigit() for v in manifest.values())}
    gpu = rows[0]["command"] if rows else None
    with open(os.path.join(rdir, "summary.json"), "w") as f:
        json.dump({"about": "speedup = cuBLAS fp16 median / qfuse plan median, same "
                            "process; checked plans only; large = >= 8M weights "
                            "per launch",
                   "meta": meta, "speedup": summary,
                   "batch1_fraction_of_copy": bandwidth,
                   "relative_to_int4": relative,
                   "extra": [{k: r[k] for k in ("run", "entry", "format", "batch",
                                                 "weights", "speedup", "qfuse_us",
                                                 "cublas_us")}
                             for r in rows if not r["core"]],
                   "failures": failures,
                   "runs_without_json": broken,
                   "example_command": gpu}, f, indent=1)
        f.write("\n")
    with open(os.path.join(rdir, "per-run.csv"), "w", newline="") as f:
        cols = ["run", "entry", "kind", "size", "core", "weights", "n", "k", "format",
                "batch", "qfuse_us", "cublas_us", "speedup", "fraction_of_copy",
                "copy_gb_per_s", "kernels", "checks", "check_passed",
                "worst_rel_err"]
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    write_table(os.path.join(rdir, "table.md"), summary, bandwidth, relative,
                rows, failures, broken, manifest, meta)
    plot(os.path.join(rdir, "speedup.png"), rows)
    print(f"{len(rows)} plans ({meta['passed']} passed), {len(meta['shapes'])} shapes; "
          f"wrote table.md, summary.json, per-run.csv, speedup.png in {rdir}")


if __name__ == "__main__":
    main()
