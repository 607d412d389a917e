#!/usr/bin/env python3
"""Issue 20's 2:4 targets on the zoo (the test set), same process: for zoo
single-weight entries of 8M-40M weights and K a multiple of 128 drawn at
random, one run per (entry, batch) holding three artifacts of one compiler,
compiled the default way (no --tuning-db): dense int4-g128 (`-a`), 2:4 +
int4-g128 (`-b`) and 2:4 f16 (`-f`). Every artifact is checked against the
C++ reference on random weights and timed against cuBLAS fp16 in the same
process by bench/zoo/run-zoo.sh; bench/sparse24/vs-dense-summary.py
tabulates 2:4 + int4 against dense int4 and 2:4 f16 against cuBLAS.

  python3 bench/sparse24/make-vs-dense.py COMPILER OUT [--entries 6]
      [--seed 45] [--batches 1,4,8,16,32,64] [--chip sm_90a]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from zoo_round import (compile_one, finish_round, pick_entries,  # noqa: E402
                       repo_relative, start_round)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python-frontend"))
from qfuse.tune import default_ir  # noqa: E402

FORMATS = {"a": "int4, group = 128, scale = f16",
           "b": "int4, group = 128, scale = f16, sparse = 2:4",
           "f": "f16, sparse = 2:4"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=6)
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--batches", default="1,4,8,16,32,64")
    ap.add_argument("--chip", default="sm_90a")
    args = ap.parse_args()
    picked = pick_entries(args.entries, args.seed)
    arts = start_round(args.out)
    lines = []
    for e in picked:
        n, k = e["n_total"], e["k"]
        for m in map(int, args.batches.split(",")):
            name = f"{e['id']}-b{m}"
            rel = []
            for side, enc in FORMATS.items():
                path = os.path.join(arts, f"{name}-{side}.qfa")
                compile_one(args.compiler, default_ir(m, n, k, enc), path, args.chip)
                rel.append(repo_relative(path))
            est = 4 + 1.5 * m * n * k / 2e9
            lines.append(f"{name} {est:.0f} --batch {m} --gemm {m}x{n}x{k} --check "
                         + " ".join(f"--artifact {p}" for p in rel))
    finish_round(args.out, lines, args.seed)
    print(f"{len(lines)} cells of {len(picked)} entries: "
          + ", ".join(f"{e['id']}" for e in picked))


if __name__ == "__main__":
    main()
