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
import random
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "zoo"))
import zoo  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python-frontend"))
from qfuse.tune import default_ir  # noqa: E402

FORMATS = {"sp-int4": "int4, group = 128, scale = f16, sparse = 2:4",
           "sp-f16": "f16, sparse = 2:4"}


def compile_one(tool, ir, path, chip):
    r = subprocess.run([tool, "-", "-o", path, f"--chip={chip}"], input=ir,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{tool} failed on {path}: {r.stderr.strip()[-400:]}")


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
    singles = [e for e in zoo.derive(zoo.load_models())[0]
               if e["kind"] == "single" and 8e6 <= e["weights"] <= 40e6
               and e["k"] % 128 == 0]
    picked = random.Random(args.seed).sample(singles, args.entries)
    shutil.rmtree(args.out, ignore_errors=True)
    arts = os.path.join(args.out, "artifacts")
    os.makedirs(arts)
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
                rel = [os.path.relpath(p, os.path.join(HERE, "..", "..")) for p in (a, b)]
                est = 3 + m * n * k / 2e9
                lines.append(f"{name} {est:.0f} --batch {m} --gemm {m}x{n}x{k} --check "
                             f"--artifact {rel[0]} --artifact {rel[1]}")
    # A fixed random order: a round cut short by its budget leaves out a
    # sample, not the last entries.
    random.Random(args.seed).shuffle(lines)
    with open(os.path.join(args.out, "runs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "COMPILE"), "w") as f:
        f.write(" ".join(sys.argv) + "\n")
    with tarfile.open(os.path.join(args.out, "artifacts.txz"), "w:xz") as t:
        t.add(arts, arcname="artifacts")
    shutil.rmtree(arts)
    print(f"{len(lines)} changed cells of {len(picked)} entries: "
          + ", ".join(f"{e['id']}" for e in picked))


if __name__ == "__main__":
    main()
