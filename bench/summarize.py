#!/usr/bin/env python3
"""Prints the table of a GPU round: every compiled plan against cuBLAS fp16
on the same shape, measured in the same process (qfuse-bench JSON files).

    python3 bench/summarize.py gpu-out/results
"""
import glob
import json
import os
import sys


def main(folder):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            run = json.load(f)
        if "copy" not in run:  # not a qfuse-bench result (e.g. the Python CLI's)
            continue
        copy = run["copy"]["gb_per_s"]
        cublas = {}
        for r in run.get("cublas", []):
            cublas[(r["label"], r["m"])] = r["stats"]["median_ms"]
        failed = [c for c in run.get("checks", []) if not c["passed"]]
        worst = max((c["relative_error"] for c in run.get("checks", [])), default=None)
        for p in run.get("artifact_plans", []):
            shapes = p.get("weight_shapes", [])
            ms = p["stats"]["median_ms"]
            if len(shapes) == 1:
                n, k = shapes[0]["n"], shapes[0]["k"]
                label = f"{p['batch']}x{n}x{k}"
                base = cublas.get((label, p["batch"]))
                what = os.path.basename(p["artifact"]).replace(".qfa", "")
            else:
                model = next((lbl for (lbl, m) in cublas if "decode step" in lbl), None)
                base = cublas.get((model, p["batch"])) if model else None
                what = os.path.basename(p["artifact"]).replace(".qfa", "")
                what += " (step)" if model else f" ({len(shapes)} weights)"
            ratio = f"{base / ms:5.2f}x" if base else "   - "
            rows.append((what, p["batch"], ms * 1e3, (base or 0) * 1e3, ratio,
                         p["gb_per_s"], 100 * p["gb_per_s"] / copy))
        if failed:
            print(f"{os.path.basename(path)}: {len(failed)} FAILED checks")
        elif worst is not None:
            print(f"{os.path.basename(path)}: all checks passed (worst rel err {worst:.2e})")
    print(f"{'artifact':44s} {'M':>3s} {'qfuse us':>9s} {'cuBLAS us':>9s} {'speedup':>7s} {'GB/s':>7s} {'%copy':>6s}")
    for r in rows:
        base = f"{r[3]:9.2f}" if r[3] else f"{'-':>9s}"
        print(f"{r[0]:44s} {r[1]:3d} {r[2]:9.2f} {base} {r[4]:>7s} {r[5]:7.0f} {r[6]:5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpu-out/results")
