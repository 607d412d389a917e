#!/usr/bin/env python3
"""Which zoo cells' default tiling two compilers choose differently at
batches 1 and 2 (every zoo entry, q/k/v groups included, in the 4-bit
formats and int8), from `--emit=mlir`: the cells of the matvec wave rule.
Writes make-zoo-ab.py's CHANGES json ([{run, batch}]).

  python3 wave_changes.py OLD NEW OUT.json [--chip sm_90a]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "zoo"))
import zoo  # noqa: E402

FORMATS = ["int4-g128", "uint4-g128-asym", "uint4-g32-asym", "int4-pc",
           "nf4", "nvfp4", "mxfp4", "int8"]


def tilings(compiler, mlir, chip):
    """{batch: the tilings of a compile at that batch alone}."""
    found = {}
    for b in (1, 2):
        out = subprocess.run([compiler, mlir, "--emit=mlir", f"--chip={chip}",
                              f"--batch-sizes={b}", "-o", "-"], check=True,
                             capture_output=True, text=True).stdout
        found[b] = re.findall(r"tiling = #qf\.tiling<[^>]*>", out)
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("out")
    ap.add_argument("--chip", default="sm_90a")
    args = ap.parse_args()
    entries = zoo.derive(zoo.load_models())[0]
    tmp = tempfile.mkdtemp()

    def one(item):
        entry, fmt = item
        run = f"{entry['id']}-{fmt}"
        mlir = os.path.join(tmp, run + ".mlir")
        with open(mlir, "w") as f:
            f.write(zoo.emit(entry, fmt))
        a = tilings(args.old, mlir, args.chip)
        b = tilings(args.new, mlir, args.chip)
        return [(run, m, a[m], b[m]) for m in (1, 2) if a[m] != b[m]]

    items = [(e, f) for e in entries for f in FORMATS
             if zoo.format_validity(e)[f] is None]
    with ThreadPoolExecutor(2) as pool:
        changed = [c for cs in pool.map(one, items) for c in cs]
    for run, m, a, b in changed:
        print(f"{run} M={m}: {a} -> {b}")
    print(f"{len(changed)} changed cells of {len(items)} runs x 2 batches")
    with open(args.out, "w") as f:
        json.dump([{"run": r, "batch": m} for r, m, _, _ in changed], f,
                  indent=1)


if __name__ == "__main__":
    main()
