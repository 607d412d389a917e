#!/usr/bin/env python3
"""Table of a bench/mma-parallel sweep: per (projection, batch) cuBLAS fp16,
the compiler's default tiling and the fastest tiling measured (us, and x
cuBLAS), with the fastest's warps an SM; and the check runs' verdicts.

  python3 bench/mma-parallel/summarize.py RESULTS_DIR [defaults.tsv]
"""
import glob
import json
import math
import os
import re
import sys

SMS = 132
LABEL = re.compile(r"M(\d+)N(\d+)S(\d+)K(\d+)T(\d+)C(\d+)")


def warps_per_sm(label, m, n):
    bm, bn, s, _, _, c = (int(x) for x in LABEL.fullmatch(label).groups())
    return math.ceil(m / bm) * math.ceil(n / bn) * c * (bn // 32 * s) / SMS


def main():
    res = sys.argv[1]
    defaults = {}
    tsv = sys.argv[2] if len(sys.argv) > 2 else os.path.join(res, "defaults.tsv")
    if os.path.exists(tsv):
        for line in open(tsv):
            proj, m, label = line.split()
            defaults[(proj, int(m))] = label
    rows = []
    for path in sorted(glob.glob(os.path.join(res, "par-*.json"))):
        d = json.load(open(path))
        hit = re.search(r"-(\w+_proj)-b(\d+)\.json$", path)
        proj, m = hit.group(1), int(hit.group(2))
        n = int(d["cublas"][0]["label"].split("x")[1])  # "MxNxK"
        cublas = d["cublas"][0]["stats"]["median_ms"] * 1000
        times = {}
        for plan in d["artifact_plans"]:
            label = re.search(r"-(M\w+)\.qfa$", plan["artifact"]).group(1)
            times[label] = plan["stats"]["median_ms"] * 1000
        best = min(times, key=times.get)
        dflt = defaults.get((proj, m))
        dt = times.get(dflt)
        rows.append((proj, m, cublas, dflt, dt, best, times[best],
                     warps_per_sm(best, m, n), len(times)))
    print("| proj | M | cuBLAS us | default | us | x cuBLAS | fastest | us | x cuBLAS "
          "| default / fastest | warps/SM | tilings |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for proj, m, cb, dflt, dt, best, bt, w, count in rows:
        dcol = f"{dt:.2f} | {cb / dt:.2f}" if dt else "- | -"
        gain = f"{dt / bt:.2f}" if dt else "-"
        print(f"| {proj} | {m} | {cb:.2f} | {dflt or '-'} | {dcol} | {best} | {bt:.2f} | "
              f"{cb / bt:.2f} | {gain} | {w:.1f} | {count} |")
    checks = passed = 0
    for path in glob.glob(os.path.join(res, "check-*.json")):
        for c in json.load(open(path)).get("checks", []):
            checks += 1
            passed += bool(c["passed"])
    print(f"\nchecks: {passed} of {checks} passed")


if __name__ == "__main__":
    main()
