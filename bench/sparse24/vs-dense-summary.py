#!/usr/bin/env python3
"""Tabulates bench/sparse24/make-vs-dense.py as run by bench/zoo/run-zoo.sh:
per (entry, batch) the median us of dense int4-g128 (`-a`), 2:4 + int4-g128
(`-b`), 2:4 f16 (`-f`) and cuBLAS fp16 of the same process; dense / 2:4
int4 (issue 20's target >= 1.25) and cuBLAS / 2:4 f16 (target >= 1.5);
then min and median of both per batch, and every check.

    python3 bench/sparse24/vs-dense-summary.py <folder of run JSONs>
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_round import read_round  # noqa: E402

rows, checks = [], []
for name, cub, us, ck in read_round(sys.argv[1]):
    checks.append((name, ck))
    for m in sorted({b for _, b in us}):
        if all((s, m) in us for s in "abf") and m in cub:
            rows.append((name, m, us["a", m], us["b", m], us["f", m], cub[m]))
print("| run | M | int4 us | 2:4+int4 us | 2:4 f16 us | cuBLAS us | int4 / 2:4+int4 | cuBLAS / 2:4 f16 |")
print("|---|---|---|---|---|---|---|---|")
for n, m, a, b, f, c in rows:
    print(f"| {n} | {m} | {a:.2f} | {b:.2f} | {f:.2f} | {c:.2f} | {a/b:.2f} | {c/f:.2f} |")
print("\n| M | cells | int4 / 2:4+int4 min | median | cuBLAS / 2:4 f16 min | median |")
print("|---|---|---|---|---|---|")
for m in sorted({r[1] for r in rows}):
    sp = [r[2] / r[3] for r in rows if r[1] == m]
    f16 = [r[5] / r[4] for r in rows if r[1] == m]
    print(f"| {m} | {len(sp)} | {min(sp):.2f} | {statistics.median(sp):.2f} | "
          f"{min(f16):.2f} | {statistics.median(f16):.2f} |")
print("\nchecks:")
for n, ck in checks:
    print(f"  {n}: {json.dumps(ck)[:400]}")
