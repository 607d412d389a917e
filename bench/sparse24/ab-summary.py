#!/usr/bin/env python3
"""Tabulates an A/B of bench/sparse24/make-ab.py as run by
bench/zoo/run-zoo.sh: per cell (one JSON holding the `-a.qfa` and `-b.qfa`
artifacts), the median us of each, cuBLAS fp16 of the same process, b / a
and cuBLAS / b; then the geometric mean of b / a per format, per batch and
over all cells, and every check.

    python3 bench/sparse24/ab-summary.py <folder of run JSONs>
"""
import json, math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_round import read_round
geo = lambda xs: math.exp(sum(map(math.log, xs))/len(xs)) if xs else float('nan')
rows = []; checks = []
for name, cub, us, ck in read_round(sys.argv[1]):
    checks.append((name, ck))
    fmt = "sp-int4" if "sp-int4" in name else "sp-f16" if "sp-f16" in name else "?"
    for m in sorted({b for s, b in us if s == "a"} & {b for s, b in us if s == "b"}):
        a, b = us["a", m], us["b", m]; c = cub.get(m)
        rows.append((name, fmt, m, a, b, c))
print("| run | M | a us | b us | cuBLAS us | b/a | cuBLAS/b |\n|---|---|---|---|---|---|---|")
for n, f, m, a, b, c in rows:
    print(f"| {n} | {m} | {a:.1f} | {b:.1f} | {c:.1f} | {b/a:.3f} | {c/b:.2f} |" if c else f"| {n} | {m} | {a:.1f} | {b:.1f} | - | {b/a:.3f} | - |")
print("\n| group | cells | geomean b/a | min | max |\n|---|---|---|---|---|")
groups = {}
for n, f, m, a, b, c in rows:
    for k in (f"fmt {f}", f"M {m}", "all"): groups.setdefault(k, []).append(b/a)
for k in sorted(groups, key=lambda k: (k == "all", k)):
    xs = groups[k]; print(f"| {k} | {len(xs)} | {geo(xs):.3f} | {min(xs):.3f} | {max(xs):.3f} |")
print(f"\ncells with b/a > 1.02: {sum(1 for r in rows if r[4]/r[3] > 1.02)} of {len(rows)}")
print("\nchecks:")
for n, ck in checks: print(f"  {n}: {json.dumps(ck)[:400]}")
