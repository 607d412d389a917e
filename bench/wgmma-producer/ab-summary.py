#!/usr/bin/env python3
"""Tabulates an A/B of make-ab.sh as run by bench/zoo/run-zoo.sh: for each
shape and batch, the median us of `-a` and `-b`, each against cuBLAS fp16
of its own process, and b / a (above 1: `-a` faster); then the geometric
mean of b / a per batch and over all cells, and with --changes (the JSON of
bench/cost-model/tiling_changes.py) per set of tiling fields that changed,
so that an A/B of two rules at once can be split by rule.

    bench/wgmma-producer/ab-summary.py <dir holding <name>-a.json, <name>-b.json> [--changes FILE]
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


def tiling_fields(text):
    """{field: value} of a '#qf.tiling<kind, f = v, ...>' string; the
    kernel kind under 'kernel'."""
    parts = text.split("<", 1)[1].rstrip(">").split(", ")
    return dict([("kernel", parts[0])] + [tuple(f.split(" = ")) for f in parts[1:]])


def changed_fields(change):
    """The tiling fields one cell's change moves, e.g. 'block_m+split_k'."""
    old, new = tiling_fields(change["old"]), tiling_fields(change["new"])
    return "+".join(sorted(f for f in set(old) | set(new)
                           if old.get(f, "1") != new.get(f, "1"))) or "none"


def main(folder, changes_path=None):
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
    if not changes_path:
        return
    by_fields = {}
    for change in json.load(open(changes_path)):
        ab = runs.get(change["run"], {})
        if {"a", "b"} <= set(ab) and change["batch"] in ab["a"] and change["batch"] in ab["b"]:
            r = ab["b"][change["batch"]][0] / ab["a"][change["batch"]][0]
            by_fields.setdefault(changed_fields(change), []).append(r)
    print("\n| tiling fields changed | cells | geomean b / a | min | max |")
    print("|---|---|---|---|---|")
    for fields in sorted(by_fields):
        xs = by_fields[fields]
        print(f"| {fields} | {len(xs)} | {geo(xs):.3f} | {min(xs):.3f} | {max(xs):.3f} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    changes = None
    if len(args) == 3 and args[1] == "--changes":
        changes = args[2]
    elif len(args) != 1:
        sys.exit(__doc__)
    main(args[0], changes)
