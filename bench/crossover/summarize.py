#!/usr/bin/env python3
"""The crossover rounds' tables (bench/crossover/run.sh): for every shape
and format, the median time of two artifacts at each batch -- the matvec
(-mv) and the tensor-core kernel (-mma), or the previous rule (-old) and
the measured crossover (-new) -- the faster one marked, and whether every
check of both passed; then per batch the geometric mean of A's time over
B's and how many cells B made more than 3% faster or slower.

    python3 bench/crossover/summarize.py ZOO_DIR [A B] > table.md

A and B are the artifacts' suffixes (default: mv mma).
"""
import glob
import json
import math
import os
import sys


def load(path):
    d = json.load(open(path))
    times = {p["batch"]: p["stats"]["median_ms"] * 1e3 for p in d["artifact_plans"]}
    checks = d.get("checks", [])
    ok = bool(checks) and all(c.get("passed", False) for c in checks)
    weights = d["artifact_plans"][0]["weight_shapes"][0]
    return times, ok, weights["n"] * weights["k"]


def main():
    zdir = sys.argv[1]
    first, second = sys.argv[2:4] if len(sys.argv) >= 4 else ("mv", "mma")
    runs = {}
    for path in sorted(glob.glob(os.path.join(zdir, f"*-{first}.json"))):
        base = os.path.basename(path)[: -len(f"-{first}.json")]
        mma = os.path.join(zdir, f"{base}-{second}.json")
        if os.path.exists(mma):
            runs[base] = (load(path), load(mma))
    batches = sorted({b for (mv, mma) in runs.values() for b in mv[0]})
    print(f"Median us, -{first} / -{second} (the faster in bold); weights in M elements.\n")
    print("| shape-format | weights | checks | " + " | ".join(f"b{b}" for b in batches) + " |")
    print("|---|---|---|" + "---|" * len(batches))
    for base, ((mvt, mvok, w), (mmt, mmok, _)) in runs.items():
        cells = []
        for b in batches:
            a, c = mvt.get(b), mmt.get(b)
            if a is None or c is None:
                cells.append("-")
            elif a <= c:
                cells.append(f"**{a:.1f}** / {c:.1f}")
            else:
                cells.append(f"{a:.1f} / **{c:.1f}**")
        status = "pass" if mvok and mmok else "FAIL"
        print(f"| {base} | {w / 1e6:.1f} | {status} | " + " | ".join(cells) + " |")
    print(f"\n| batch | geomean -{first} / -{second} | cells | -{second} faster | "
          f"-{second} slower |\n|---|---|---|---|---|")
    for b in batches:
        ratios = [mv[0][b] / mma[0][b] for (mv, mma) in runs.values()
                  if b in mv[0] and b in mma[0]]
        if not ratios:
            continue
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"| {b} | {mean:.3f} | {len(ratios)} | "
              f"{sum(r > 1.03 for r in ratios)} | {sum(r < 0.97 for r in ratios)} |")


if __name__ == "__main__":
    main()
