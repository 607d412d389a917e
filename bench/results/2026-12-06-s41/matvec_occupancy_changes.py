#!/usr/bin/env python3
"""Which zoo cells' matvec kernels two compilers build with a different
`.minnctapersm` (the resident blocks ptxas is asked for), at batches 1-8,
the default compile: a PTX-level counterpart of tiling_changes.py for
changes that keep every tiling. Prints one line per changed cell and
writes the cells as make-zoo-ab.py's CHANGES json ([{run, batch}]).

  python3 matvec_occupancy_changes.py OLD NEW OUT.json [--chip sm_90a]
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

BATCHES = [1, 2, 3, 4, 5, 6, 7, 8]


def minncta(compiler, mlir, chip, tmp):
    """{batch: minnctapersm} of the matvec kernels of one compile."""
    ptx = mlir + "." + os.path.basename(compiler) + ".ptx"
    subprocess.run([compiler, mlir, "--emit=ptx", f"--chip={chip}",
                    "--batch-sizes=" + ",".join(map(str, BATCHES)), "-o", ptx],
                   check=True, capture_output=True)
    out = {}
    for name, body in re.findall(r"\.entry (\w+)\(([\s\S]*?)\{", open(ptx).read()):
        m = re.search(r"matvec\w*_m(\d+)", name)
        n = re.search(r"\.minnctapersm (\d+)", body)
        if m and n:
            out[int(m.group(1))] = int(n.group(1))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("out")
    ap.add_argument("--chip", default="sm_90a")
    args = ap.parse_args()
    entries = zoo.derive(zoo.load_models())[0]
    with tempfile.TemporaryDirectory() as tmp:
        def one(item):
            entry, fmt = item
            mlir = os.path.join(tmp, f"{entry['id']}-{fmt}.mlir")
            with open(mlir, "w") as f:
                f.write(zoo.emit(entry, fmt))
            a = minncta(args.old, mlir, args.chip, tmp)
            b = minncta(args.new, mlir, args.chip, tmp)
            return [(f"{entry['id']}-{fmt}", m, a.get(m), b.get(m))
                    for m in BATCHES if a.get(m) != b.get(m)]
        items = [(e, f[0]) for e in entries for f in zoo.FORMATS
                 if zoo.format_validity(e)[f[0]] is None]
        with ThreadPoolExecutor(2) as pool:
            changed = [c for cs in pool.map(one, items) for c in cs]
    for run, m, a, b in changed:
        print(f"{run} M={m}: {a} -> {b}")
    print(f"{len(changed)} changed cells of {len(items)} runs x {len(BATCHES)} batches")
    with open(args.out, "w") as f:
        json.dump([{"run": r, "batch": m} for r, m, _, _ in changed], f, indent=1)


if __name__ == "__main__":
    main()
