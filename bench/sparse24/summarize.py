#!/usr/bin/env python3
"""Summarizes the 2:4 GPU round (bench/sparse24/run.sh): per shape and batch,
each format's plan time (artifacts <format>-<N>x<K>.qfa, one weight named
after its format; <format>-mma: mma.sp at batches 1-8 instead of the
matvec), cuBLAS fp16's and dense int4-g128's from the same process, x cuBLAS
fp16 and x dense int4, and the checks (every plan of a checked run against
the C++ reference). Writes <dir>/summary.json and prints the tables, then
whether the targets hold at batches 1-64: 2:4 + int4 >= 1.25x dense
int4-g128, 2:4 f16 >= 1.5x cuBLAS fp16 (the default compile, and with
mma.sp at batches 1-8).

    summarize.py <dir with the runs' JSON>
"""
import json
import os
import sys

FORMATS = ["sp-f16", "sp-int4", "sp-uint4", "sp-int8", "int4"]
MMA_FORMATS = [f + "-mma" for f in FORMATS[:-1]] + ["int4"]
TARGETS = {"sp-int4": ("vs_int4", 1.25, "x dense int4"),
           "sp-f16": ("vs_cublas", 1.5, "x cuBLAS fp16")}
TARGET_BATCHES = range(1, 65)


def load(d):
    """Rows keyed by (format, shape, batch); dense int4 keyed by run too."""
    rows, dense = {}, {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".json") or f == "summary.json":
            continue
        data = json.load(open(os.path.join(d, f)))
        cublas = {c["label"]: c for c in data.get("cublas", [])}
        checks = {}
        for c in data.get("checks", []):
            # A weight kept in another layout at some batch is checked as
            # "<weight>@<layout>" (sp-int4@tiled_n32_k64 at batch 2).
            weight = c["weight"].split("@", 1)[0]
            checks.setdefault((weight, c["m"]), []).append(c)
        for p in data.get("artifact_plans", []):
            name = os.path.basename(p["artifact"]).removesuffix(".qfa")
            fmt, shape = name.rsplit("-", 1)
            n, k = (int(v) for v in shape.split("x"))
            b = p["batch"]
            c = cublas.get(f"{b}x{n}x{k}")
            mine = checks.get((fmt, b), [])
            row = {
                "format": fmt, "shape": shape, "batch": b,
                "us": p["stats"]["median_ms"] * 1e3,
                "cublas_us": c["stats"]["median_ms"] * 1e3 if c else None,
                "kernels": p["steps"],
                "checked": bool(mine),
                "check_passed": all(x["passed"] for x in mine) if mine else None,
                "worst_rel_err": max((x["relative_error"] for x in mine),
                                     default=None),
                "run": f[:-5], "command": data["command"]}
            if fmt == "int4":
                dense[(row["run"], shape, b)] = row
                if (fmt, shape, b) in rows:  # the first run's (check-*)
                    continue
            rows[(fmt, shape, b)] = row
    for r in rows.values():
        same = dense.get((r["run"], r["shape"], r["batch"]))
        r["vs_cublas"] = r["cublas_us"] / r["us"] if r["cublas_us"] else None
        r["int4_us"] = same["us"] if same else None
        r["vs_int4"] = (same["us"] / r["us"]
                        if same and r["format"] != "int4" else None)
    return rows


def fmtx(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def table(rows, formats, batches):
    keys = sorted({(s, b) for (f, s, b) in rows
                   if f in formats[:-1] and b in batches})
    head = f"{'N x K':11} {'M':>4} {'cuBLAS':>7} {'int4':>7}"
    for fmt in formats[:-1]:
        head += f" | {fmt + ' us':>15} {'xcuB':>5} {'xint4':>5}"
    print(head + " | check")
    for shape, b in keys:
        mine = [rows.get((f, shape, b)) for f in formats]
        anyr = next(r for r in mine[:-1] if r)
        line = (f"{shape:11} {b:4} {fmtx(anyr['cublas_us'], '7.1f'):>7} "
                f"{fmtx(anyr['int4_us'], '7.1f'):>7}")
        status = set()
        for fmt, r in zip(formats, mine):
            if fmt != "int4":
                line += (f" | {fmtx(r['us'] if r else None, '15.1f'):>15} "
                         f"{fmtx(r and r['vs_cublas']):>5} "
                         f"{fmtx(r and r['vs_int4']):>5}")
            if r and r["check_passed"] is False:
                status.add("FAIL " + fmt)
            elif r and not r["checked"]:
                status.add("unchecked")
        print(line + " | " + (", ".join(sorted(status)) or "ok"))


def best(rows, r, key):
    """r, or its -mma twin where that is faster by `key`."""
    twin = rows.get((r["format"] + "-mma", r["shape"], r["batch"]))
    if twin and twin[key] is not None and (r[key] is None or twin[key] > r[key]):
        return twin
    return r


def main():
    d = sys.argv[1]
    rows = load(d)
    table(rows, FORMATS, range(1, 100000))
    print("\nmma.sp at batches 1-8 (tuning database), beside the same "
          "process's dense int4:")
    table(rows, MMA_FORMATS, range(1, 9))
    out = [rows[k] for k in sorted(rows)]
    for r in out:
        t = TARGETS.get(r["format"])
        if t and r["batch"] in TARGET_BATCHES:
            r["target"] = f">= {t[1]}{t[2]}"
            r["meets_target"] = r[t[0]] is not None and r[t[0]] >= t[1]
    json.dump(out, open(os.path.join(d, "summary.json"), "w"), indent=1)
    failed = [r for r in out if r["check_passed"] is False]
    unchecked = [r for r in out if not r["checked"]]
    print(f"\n{len(out)} plans, {len(out) - len(unchecked)} checked, "
          f"{len(failed)} failed checks"
          + "".join(f"\n  FAIL {r['format']} {r['shape']} M={r['batch']} "
                    f"rel err {fmtx(r['worst_rel_err'], '.2e')}"
                    for r in failed))
    for fmt, (key, bound, what) in TARGETS.items():
        for label, pick in (("default compile", lambda r: r),
                            ("mma.sp at 1-8", lambda r: best(rows, r, key))):
            mine = [pick(r) for r in out if r["format"] == fmt and "target" in r]
            ratios = [r[key] for r in mine if r[key] is not None]
            held = [v for v in ratios if v >= bound]
            print(f"target {fmt} >= {bound}{what}, batches 1-64, {label}: "
                  f"{'HOLDS' if mine and len(held) == len(mine) else 'NOT MET'}"
                  f" (holds in {len(held)} of {len(mine)} cells; range "
                  f"{fmtx(min(ratios, default=None))}-"
                  f"{fmtx(max(ratios, default=None))}x)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
