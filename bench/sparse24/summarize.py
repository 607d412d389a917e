#!/usr/bin/env python3
"""Summarizes the 2:4 GPU round (bench/sparse24/run.sh): per format, shape
and batch, the checks (worst relative error against the C++ reference), the
plan's median time, cuBLAS fp16's at the same shape, and each 2:4 format's
speedup over dense int4-g128 at the same shape and batch (run names are
<format>-<N>x<K>). Writes <dir>/summary.json and prints a table.

    summarize.py <dir with the runs' JSON>
"""
import json
import os
import sys

TARGETS = {"sp-int4": ("int4", 1.25), "sp-f16": ("cublas", 1.5)}


def load(d):
    rows = {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".json") or f == "summary.json":
            continue
        name = f[:-5]
        fmt, shape = name.rsplit("-", 1)
        data = json.load(open(os.path.join(d, f)))
        cublas = {c["m"]: c for c in data.get("cublas", [])}
        for p in data.get("artifact_plans", []):
            b = p["batch"]
            checks = [k for k in data.get("checks", []) if k["m"] == b]
            c = cublas.get(b)
            rows[(fmt, shape, b)] = {
                "format": fmt, "shape": shape, "batch": b,
                "us": p["stats"]["median_ms"] * 1e3,
                "cublas_us": c["stats"]["median_ms"] * 1e3 if c else None,
                "kernels": p["steps"],
                "check_passed": bool(checks) and all(k["passed"] for k in checks),
                "worst_rel_err": max((k["relative_error"] for k in checks), default=None),
                "command": data["command"]}
    return rows


def main():
    d = sys.argv[1]
    rows = load(d)
    out = []
    print(f"{'format':9} {'shape':11} {'batch':>5} {'us':>9} {'cuBLAS':>9} "
          f"{'x cuBLAS':>8} {'x int4':>7} {'check':>6}  kernels")
    for key in sorted(rows):
        r = rows[key]
        dense = rows.get(("int4", r["shape"], r["batch"]))
        r["vs_cublas"] = r["cublas_us"] / r["us"] if r["cublas_us"] else None
        r["vs_int4"] = dense["us"] / r["us"] if dense and r["format"] != "int4" else None
        target = TARGETS.get(r["format"])
        if target and 8 <= r["batch"] <= 64:
            ratio = r["vs_int4"] if target[0] == "int4" else r["vs_cublas"]
            r["target"] = f">= {target[1]}x {target[0]}"
            r["meets_target"] = ratio is not None and ratio >= target[1]
        out.append(r)
        fmtx = lambda v: "-" if v is None else f"{v:.2f}"
        print(f"{r['format']:9} {r['shape']:11} {r['batch']:5} {r['us']:9.1f} "
              f"{fmtx(r['cublas_us']):>9} {fmtx(r['vs_cublas']):>8} "
              f"{fmtx(r['vs_int4']):>7} {'ok' if r['check_passed'] else 'FAIL':>6}  "
              f"{','.join(r['kernels']) if isinstance(r['kernels'], list) else r['kernels']}")
    json.dump(out, open(os.path.join(d, "summary.json"), "w"), indent=1)
    bad = [r for r in out if not r["check_passed"]]
    missed = [r for r in out if r.get("meets_target") is False]
    print(f"{len(out)} rows, {len(bad)} failed checks, "
          f"{len(missed)} below target (batches 8-64)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
