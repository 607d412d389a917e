#!/usr/bin/env python3
"""Tabulates an A/B of make-ab.sh as run by bench/zoo/run-zoo.sh: for each
shape and batch, the median us of `-a` and `-b`, each against cuBLAS fp16
of its own process, and b / a (above 1: `-a` faster); then the geometric
mean of b / a per batch and over all cells.

    bench/wgmma-producer/ab-summary.py <dir holding <name>-a.json, <name>-b.json>
"""
import glob
import json
import math
import os
import sys


def medians(path):
    """{batch: (plan us, cuBLAS us)} of one qfuse-bench --json file."""
    d = json.load(open(path))
    cublas = {c["m"]: c["stats"]["median_ms"] * 1e3 for c in d["cublas"]}
    return {p["batch"]: (p["stats"]["median_ms"] * 1e3, cublas.get(p["batch"]))
            for p in d["artifact_plans"]}


def main(folder):
    runs = {}
    for path in glob.glob(os.path.join(folder, "**", "*-[ab].json"), recursive=True):
        name, variant = os.path.basename(path)[:-5].rsplit("-", 1)
        runs.setdefault(name, {})[variant] = medians(path)
    ratios = {}
    print("| shape | M | a us (cuBLAS/a) | b us (cuBLAS/b) | b / a |")
    print("|---|---|---|---|---|")
    for name in sorted(runs):
        if set(runs[name]) != {"a", "b"}:
            print(f"| {name} | - | {'measured' if 'a' in runs[name] else 'not measured'} "
                  f"| {'measured' if 'b' in runs[name] else 'not measured'} | - |")
            continue
        a, b = runs[name]["a"], runs[name]["b"]
        for m in sorted(set(a) & set(b)):
            (ta, ca), (tb, cb) = a[m], b[m]
            r = tb / ta
            ratios.setdefault(m, []).append(r)
            print(f"| {name} | {m} | {ta:.1f} ({ca / ta:.2f}) | {tb:.1f} ({cb / tb:.2f}) | {r:.3f} |")
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print("\n| M | cells | geomean b / a | min | max |")
    print("|---|---|---|---|---|")
    for m in sorted(ratios):
        xs = ratios[m]
        print(f"| {m} | {len(xs)} | {geo(xs):.3f} | {min(xs):.3f} | {max(xs):.3f} |")
    every = [r for xs in ratios.values() for r in xs]
    if every:
        print(f"| all | {len(every)} | {geo(every):.3f} | {min(every):.3f} | {max(every):.3f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
