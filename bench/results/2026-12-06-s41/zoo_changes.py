#!/usr/bin/env python3
"""Which zoo cells two compilers build differently, the default compile,
over every zoo entry (q/k/v groups included):

  --what tilings  the tilings `--emit=mlir` records at each batch (compiled
                  one batch at a time): the cells of a selection rule;
  --what minncta  the `.minnctapersm` of each matvec kernel in `--emit=ptx`
                  (batches 1-8): the cells of an occupancy rule, which keeps
                  every tiling.

Prints one line per changed cell and writes make-zoo-ab.py's CHANGES json
([{run, batch}]).

  python3 zoo_changes.py OLD NEW OUT.json --what tilings --batches 1,2 \
      [--formats int4-g128,nf4,...] [--chip sm_90a]
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


def tilings(compiler, mlir, chip, batches):
    """{batch: the tilings of a compile at that batch alone}."""
    found = {}
    for b in batches:
        out = subprocess.run([compiler, mlir, "--emit=mlir", f"--chip={chip}",
                              f"--batch-sizes={b}", "-o", "-"], check=True,
                             capture_output=True, text=True).stdout
        found[b] = re.findall(r"tiling = #qf\.tiling<[^>]*>", out)
    return found


def minncta(compiler, mlir, chip, batches):
    """{batch: .minnctapersm} of the matvec kernels of one compile."""
    ptx = subprocess.run([compiler, mlir, "--emit=ptx", f"--chip={chip}",
                          "--batch-sizes=" + ",".join(map(str, batches)),
                          "-o", "-"], check=True, capture_output=True,
                         text=True).stdout
    found = {}
    for name, body in re.findall(r"\.entry (\w+)\(([\s\S]*?)\{", ptx):
        m = re.search(r"matvec\w*_m(\d+)", name)
        n = re.search(r"\.minnctapersm (\d+)", body)
        if m and n:
            found[int(m.group(1))] = int(n.group(1))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("out")
    ap.add_argument("--what", choices=["tilings", "minncta"], required=True)
    ap.add_argument("--batches", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--formats", default=",".join(f[0] for f in zoo.FORMATS))
    ap.add_argument("--chip", default="sm_90a")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    extract = tilings if args.what == "tilings" else minncta
    entries = zoo.derive(zoo.load_models())[0]
    tmp = tempfile.mkdtemp()

    def one(item):
        entry, fmt = item
        run = f"{entry['id']}-{fmt}"
        mlir = os.path.join(tmp, run + ".mlir")
        with open(mlir, "w") as f:
            f.write(zoo.emit(entry, fmt))
        a = extract(args.old, mlir, args.chip, batches)
        b = extract(args.new, mlir, args.chip, batches)
        return [(run, m, a.get(m), b.get(m)) for m in batches
                if a.get(m) != b.get(m)]

    items = [(e, f) for e in entries for f in args.formats.split(",")
             if zoo.format_validity(e)[f] is None]
    with ThreadPoolExecutor(2) as pool:
        changed = [c for cs in pool.map(one, items) for c in cs]
    for run, m, a, b in changed:
        print(f"{run} M={m}: {a} -> {b}")
    print(f"{len(changed)} changed cells of {len(items)} runs x "
          f"{len(batches)} batches")
    with open(args.out, "w") as f:
        json.dump([{"run": r, "batch": m} for r, m, _, _ in changed], f,
                  indent=1)


if __name__ == "__main__":
    main()
