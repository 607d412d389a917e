#!/usr/bin/env python3
"""b / a of the split-K A/B split by whether the cell's kernels changed:
a cell whose kernels have the same PTX on both sides (split_k 1, the
matvec) is the control.

    python3 by-change.py <artifacts dir of build-s64/ab, unpacked> <JSON dir>
"""
import glob
import json
import math
import os
import re
import sys


def kernels(ptx):
    starts = [(m.group(1), m.start()) for m in re.finditer(r"\.entry (\w+)\(", ptx)]
    ends = [s for _, s in starts[1:]] + [len(ptx)]
    return {name: ptx[s:e] for (name, s), e in zip(starts, ends)}


def changed_cells(arts):
    out = {}
    for fb in glob.glob(os.path.join(arts, "*-b.qfa")):
        a, b = json.load(open(fb[:-6] + "-a.qfa")), json.load(open(fb))
        ka, kb = kernels(a["module"]["ptx"]), kernels(b["module"]["ptx"])
        for plan in b["plans"]:
            names = [s["launch"] for s in plan["steps"] if "launch" in s]
            out[(os.path.basename(fb)[:-6], plan["batch"])] = any(
                ka.get(n) != kb.get(n) for n in names)
    return out


def medians(path):
    return {p["batch"]: p["stats"]["median_ms"]
            for p in json.load(open(path))["artifact_plans"]}


def main(arts, results):
    changed = changed_cells(arts)
    groups = {}
    for fa in glob.glob(os.path.join(results, "*-a.json")):
        run = os.path.basename(fa)[:-7]
        a, b = medians(fa), medians(fa[:-7] + "-b.json")
        for m in sorted(set(a) & set(b)):
            side = "changed" if changed.get((run, m)) else "same PTX"
            band = str(m) if m <= 16 else "24-128"
            for key in ((side, band), (side, "all")):
                groups.setdefault(key, []).append(b[m] / a[m])
    print("| kernels | M | cells | geomean b / a | min | max |")
    print("|---|---|---|---|---|---|")
    for (side, band), xs in sorted(groups.items()):
        geo = math.exp(sum(map(math.log, xs)) / len(xs))
        print(f"| {side} | {band} | {len(xs)} | {geo:.3f} | {min(xs):.3f} | {max(xs):.3f} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
