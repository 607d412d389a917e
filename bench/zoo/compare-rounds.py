#!/usr/bin/env python3
"""Two zoo rounds cell by cell (shape x format x batch, checked plans
only; each round's per-run.csv and summary.json, bench/zoo/summarize.py):
medians per format and batch, new / old speedup by batch range, size and
format, and the largest moves.

    python3 bench/zoo/compare-rounds.py OLD_ROUND NEW_ROUND [OLD_LABEL NEW_LABEL]
"""
import csv, json, math, os, statistics, sys
OLD, NEW = sys.argv[1], sys.argv[2]
A, B = sys.argv[3:5] if len(sys.argv) > 4 else ("old", "new")
FMTS = ["int4-g128", "uint4-g128-asym", "uint4-g32-asym", "int4-pc", "nf4",
        "nvfp4", "mxfp4", "int8", "fp8"]
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 512]

def cells(d):
    out = {}
    with open(os.path.join(d, "per-run.csv")) as f:
        for r in csv.DictReader(f):
            if r["check_passed"] != "True":
                continue
            out[(r["run"], r["entry"], r["format"], int(r["batch"]))] = (
                float(r["speedup"]), r["size"], r["core"] == "True",
                float(r["qfuse_us"]), float(r["cublas_us"]))
    return out

old, new = cells(OLD), cells(NEW)
so = json.load(open(os.path.join(OLD, "summary.json")))
sn = json.load(open(os.path.join(NEW, "summary.json")))
print(f"checked plans: {A} {so['meta']['checked_plans']} ({so['meta']['passed']} passed), "
      f"{B} {sn['meta']['checked_plans']} ({sn['meta']['passed']} passed); "
      f"{B} worst rel err {sn['meta']['worst_err']:.2e}; failures {len(sn['failures'])}; "
      f"runs done {sn['meta']['runs_done']} of {sn['meta']['runs_listed']}")
for size in ("large", "small"):
    print(f"\n{size} shapes: median (min) x cuBLAS fp16, {A} -> {B}")
    print("| format | " + " | ".join(f"b{b}" for b in BATCHES) + " |")
    print("|---|" + "---|" * len(BATCHES))
    for fm in FMTS:
        row = []
        for b in BATCHES:
            o = so["speedup"].get(fm, {}).get(str(b), {}).get(size)
            n = sn["speedup"].get(fm, {}).get(str(b), {}).get(size)
            if not o or not n:
                row.append("-")
                continue
            row.append(f"{o['median']:.2f} ({o['min']:.2f}) -> {n['median']:.2f} ({n['min']:.2f})")
        print(f"| {fm} | " + " | ".join(row) + " |")

common = sorted(set(old) & set(new))
print(f"\ncells in both rounds: {len(common)} ({A} only {len(set(old)-set(new))}, {B} only {len(set(new)-set(old))})")
def gm(xs):
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else float("nan")
ranges = [("all", lambda m: True), ("M = 1", lambda m: m == 1), ("M = 2", lambda m: m == 2),
          ("M 3-16", lambda m: 3 <= m <= 16), ("M 24-64", lambda m: 24 <= m <= 64),
          ("M 96-512", lambda m: m >= 96)]
print("\nnew / old speedup per cell (geomean, min, max, n; cells > 1.05 / < 0.95)")
for label, pred in ranges:
    for size in (None, "large", "small"):
        rs = [new[c][0] / old[c][0] for c in common if pred(c[3]) and (size is None or new[c][1] == size)]
        if not rs:
            continue
        print(f"  {label:8s} {size or 'all':5s}: {gm(rs):.3f}  ({min(rs):.2f}-{max(rs):.2f}, n={len(rs)}; "
              f"{sum(r > 1.05 for r in rs)} up, {sum(r < 0.95 for r in rs)} down)")
print("\ntimes, new / old per cell (geomean): qfuse plan and cuBLAS fp16")
for label, pred in ranges:
    q = [new[c][3] / old[c][3] for c in common if pred(c[3])]
    cb = [new[c][4] / old[c][4] for c in common if pred(c[3])]
    print(f"  {label:8s}: qfuse {gm(q):.3f}, cuBLAS {gm(cb):.3f}")
print("\nper format, new / old geomean by range (all shapes)")
print("| format | all | M=1 | M=2 | M 3-16 | M 24-64 | M 96-512 |")
print("|---|---|---|---|---|---|---|")
for fm in FMTS:
    vals = []
    for label, pred in ranges:
        rs = [new[c][0] / old[c][0] for c in common if c[2] == fm and pred(c[3])]
        vals.append(f"{gm(rs):.3f}")
    print(f"| {fm} | " + " | ".join(vals) + " |")
print("\nlargest moves (new/old)")
rs = sorted(((new[c][0] / old[c][0], c) for c in common))
for r, c in rs[:10] + rs[-10:]:
    print(f"  {r:.3f}  {c[1]} {c[2]} b{c[3]}: {old[c][0]:.2f} -> {new[c][0]:.2f}")
print(f"\nbatch 1 fraction of copy bandwidth, large shapes, median: {A} -> {B}")
for fm in FMTS:
    o = so["batch1_fraction_of_copy"].get(fm); n = sn["batch1_fraction_of_copy"].get(fm)
    if o and n:
        print(f"  {fm:16s} {o['median']:.0%} -> {n['median']:.0%} ({B} range {n['min']:.0%}-{n['max']:.0%})")
print(f"\nsmall shapes, batches <= 16, min per format ({B}; {A} in brackets)")
for fm in FMTS:
    nn = [(new[c][0], c) for c in new if new[c][1] == "small" and c[3] <= 16 and c[2] == fm]
    oo = [old[c][0] for c in old if old[c][1] == "small" and c[3] <= 16 and c[2] == fm]
    v, c = min(nn)
    print(f"  {fm:16s} {v:.2f} ({c[1]} b{c[3]})  [{min(oo):.2f}]")
print(f"\nsmall shapes at batches <= 16 below 1.0 ({B})")
for c in sorted(new):
    if new[c][1] == "small" and c[3] <= 16 and new[c][0] < 1.0:
        print(f"  {c[1]} {c[2]} b{c[3]}: {new[c][0]:.3f} ({A} {old.get(c, (float('nan'),))[0]:.3f})")
