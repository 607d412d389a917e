#!/usr/bin/env python3
"""An A/B of two compilers on the zoo cells whose default tiling differs:
reads tiling_changes.py's --json (the (run, batch) cells), compiles each
changed run twice the default way (no --tuning-db; `-a` by OLD, `-b` by
NEW), each at its changed batches only, and writes the folder that
bench/zoo/run-zoo.sh runs on the GPU machine once artifacts.txz is
unpacked there (every plan checked, timed
against cuBLAS fp16 in the same process); bench/wgmma-producer/ab-summary.py
tabulates b / a. The zoo is the test set: a model change fitted on the
training sweeps is evidence only where it wins here.

  python3 bench/cost-model/make-zoo-ab.py OLD_COMPILER NEW_COMPILER \
      CHANGES.json OUT_DIR [--chip sm_90a] [--jobs 2]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO_DIR = os.path.join(HERE, "..", "zoo")
sys.path.insert(0, ZOO_DIR)
import zoo  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("changes")
    ap.add_argument("out")
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    entries = {e["id"]: e for e in zoo.derive(zoo.load_models())[0]}
    batches = {}
    for c in json.load(open(args.changes)):
        batches.setdefault(c["run"], set()).add(c["batch"])
    shutil.rmtree(args.out, ignore_errors=True)
    arts = os.path.join(args.out, "artifacts")
    os.makedirs(arts)
    # Pairs in a fixed random order: a round cut short by its budget
    # leaves out a sample, not the last shapes.
    runs = sorted(batches.items())
    random.Random(0).shuffle(runs)
    jobs, lines = [], []
    for run, bs in runs:
        # A run is named <entry id>-<format> (tiling_changes.py).
        fmt = next(f[0] for f in zoo.FORMATS if run.endswith("-" + f[0]))
        entry, bs = entries[run[:-len(fmt) - 1]], sorted(bs)
        mlir = os.path.join(arts, run + ".mlir")
        with open(mlir, "w") as f:
            f.write(zoo.emit(entry, fmt))
        gemms = " ".join(f"--gemm {b}x{entry['n_total']}x{entry['k']}"
                         for b in bs)
        for side, compiler in (("a", args.old), ("b", args.new)):
            qfa = os.path.join(arts, f"{run}-{side}.qfa")
            jobs.append([compiler, mlir, "--batch-sizes=" + ",".join(map(str, bs)),
                         f"--chip={args.chip}", "-o", qfa])
            lines.append(f"{run}-{side} {zoo.run_cost(entry, bs):.1f} --artifact "
                         f"{qfa} --batch {','.join(map(str, bs))} {gemms} --check")
    zoo.compile_all(jobs, args.jobs)
    with open(os.path.join(args.out, "runs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "COMPILE"), "w") as f:
        f.write(f"qfuse-compile <run>.mlir --batch-sizes=<its changed batches> "
                f"--chip={args.chip}: -a {args.old}, -b {args.new} "
                f"(no --tuning-db)\n")
    with open(os.path.join(args.out, "COMMIT"), "w") as f:
        f.write(subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                               capture_output=True, text=True).stdout)
    # xz: the device's copy of the tree and its carry share 64 MiB.
    with tarfile.open(os.path.join(args.out, "artifacts.txz"), "w:xz") as t:
        t.add(arts, arcname="artifacts")
    shutil.rmtree(arts)
    print(f"{len(batches)} runs x 2, {sum(map(len, batches.values()))} cells, "
          f"in {args.out}")


if __name__ == "__main__":
    main()
