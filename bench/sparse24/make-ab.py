#!/usr/bin/env python3
"""An A/B of two compilers on 2:4 weights of the zoo (the test set: none of
its shapes is a training shape of the sparse sweeps): zoo single-weight
entries of 8M-40M weights and K a multiple of 128 drawn at random, 2:4 +
int4-g128 and 2:4 f16, compiled the default way (no --tuning-db) by OLD
(`-a`) and NEW (`-b`) at each batch, keeping the cells where the two
compilers' artifacts differ.
Writes the folder bench/zoo/run-zoo.sh runs on the GPU machine (one run
per cell: both artifacts checked against the C++ reference on random
weights, timed against cuBLAS fp16 in the same process);
bench/sparse24/ab-summary.py tabulates b / a.

  python3 bench/sparse24/make-ab.py OLD NEW OUT [--entries 8] [--seed 44]
      [--batches 24,32,48,64] [--chip sm_90a]
"""
import argparse
import filecmp
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from zoo_round import (compile_one, finish_round, pick_entries,  # noqa: E402
                       repo_relative, start_round)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python-frontend"))
from qfuse.tune import default_ir  # noqa: E402

FORMATS = {"sp-int4": "int4, group = 128, scale = f16, sparse = 2:4",
           "sp-f16": "f16, sparse = 2:4"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=8)
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--batches", default="24,32,48,64")
    ap.add_argument("--chip", default="sm_90a")
    args = ap.parse_args()
    picked = pick_entries(args.entries, args.seed)
    arts = start_round(args.out)
    lines = []
    for e in picked:
        n, k = e["n_total"], e["k"]
        for fmt, enc in FORMATS.items():
            for m in map(int, args.batches.split(",")):
                name = f"{e['id']}-{fmt}-b{m}"
                a, b = (os.path.join(arts, f"{name}-{s}.qfa") for s in "ab")
                ir = default_ir(m, n, k, enc)
                compile_one(args.old, ir, a, args.chip)
                compile_one(args.new, ir, b, args.chip)
                if filecmp.cmp(a, b, shallow=False):
                    os.remove(a)
                    os.remove(b)
                    continue
                est = 3 + m * n * k / 2e9
                lines.append(f"{name} {est:.0f} --batch {m} --gemm {m}x{n}x{k} --check "
                             f"--artifact {repo_relative(a)} --artifact {repo_relative(b)}")
    finish_round(args.out, lines, args.seed)
    print(f"{len(lines)} changed cells of {len(picked)} entries: "
          + ", ".join(f"{e['id']}" for e in picked))


if __name__ == "__main__":
    main()
