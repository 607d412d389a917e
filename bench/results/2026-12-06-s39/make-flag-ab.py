#!/usr/bin/env python3
"""The A/Bs of session 39: the same IR compiled the default way (-a) and
with one more qfuse-compile flag (-b), in the folder layout
bench/zoo/run-zoo.sh runs and bench/wgmma-producer/ab-summary.py tabulates.

  make-flag-ab.py train OUT   # Llama-3-8B's launches (the training set)
  make-flag-ab.py zoo OUT     # a sample of zoo entries (the test set)
  (env FLAG, default --mma-warp-n=16; FORMATS and BATCHES, comma lists)

Formats int4-g128, nf4, nvfp4, int8; --chip=sm_90a (what an H200 runs of
the default artifact). --mma-warp-n exists only in a compiler built with
warp-n16.patch (this folder) applied to 9fc6664; it was not kept.
"""
import os
import random
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "zoo"))
import zoo  # noqa: E402

COMPILER = os.path.join(ROOT, "build", "bin", "qfuse-compile")
FLAG = os.environ.get("FLAG", "--mma-warp-n=16")
FORMATS = os.environ.get("FORMATS", "int4-g128,nf4,nvfp4,int8").split(",")
BATCHES = [int(b) for b in
           os.environ.get("BATCHES", "3,4,8,16,24,32,48,64,96").split(",")]


def entry(eid, kind, members):
    k = members[0][2]
    return {"id": eid, "kind": kind, "used_by": ["llama3-8b"], "k": k,
            "members": [{"proj": p, "n": n, "k": kk} for p, n, kk in members],
            "n_total": sum(n for _, n, _ in members),
            "weights": sum(n * kk for _, n, kk in members)}


def training():
    return [entry("l3-qkv", "qkv", [("q_proj", 4096, 4096), ("k_proj", 1024, 4096),
                                    ("v_proj", 1024, 4096)]),
            entry("l3-o", "single", [("w", 4096, 4096)]),
            entry("l3-gate_up", "gate_up", [("gate_proj", 14336, 4096),
                                            ("up_proj", 14336, 4096)]),
            entry("l3-down", "single", [("w", 4096, 14336)])]


def zoo_sample(count=9):
    entries = zoo.derive(zoo.load_models())[0]
    large = sorted((e for e in entries if e["weights"] >= zoo.LARGE),
                   key=lambda e: e["id"])
    small = sorted((e for e in entries if e["weights"] < zoo.LARGE),
                   key=lambda e: e["id"])
    rng = random.Random(39)
    return rng.sample(large, count * 2 // 3) + rng.sample(small, count // 3)


def main(which, out, entries=None):
    """`entries`, when given, replaces `which`'s list (make-regime-ab.py)."""
    if entries is None:
        entries = training() if which == "train" else zoo_sample()
    shutil.rmtree(out, ignore_errors=True)
    arts = os.path.join(out, "artifacts")
    os.makedirs(arts)
    jobs, lines = [], []
    bs = ",".join(map(str, BATCHES))
    for e in entries:
        for fmt in FORMATS:
            run = f"{e['id']}-{fmt}"
            mlir = os.path.join(arts, run + ".mlir")
            with open(mlir, "w") as f:
                f.write(zoo.emit(e, fmt))
            gemms = " ".join(f"--gemm {b}x{e['n_total']}x{e['k']}" for b in BATCHES)
            for side, extra in (("a", []), ("b", [FLAG])):
                qfa = os.path.join(arts, f"{run}-{side}.qfa")
                jobs.append([COMPILER, mlir, "--batch-sizes=" + bs, "--chip=sm_90a",
                             "-o", qfa] + extra)
                lines.append(f"{run}-{side} {zoo.run_cost(e, BATCHES):.1f} --artifact "
                             f"{qfa} --batch {bs} {gemms} --check")
    zoo.compile_all(jobs, 2)
    with open(os.path.join(out, "runs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "COMPILE"), "w") as f:
        f.write(f"qfuse-compile <run>.mlir --batch-sizes={bs} --chip=sm_90a "
                f"(no --tuning-db): -a as is, -b with {FLAG}\n")
    with open(os.path.join(out, "COMMIT"), "w") as f:
        f.write(subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                               capture_output=True, text=True).stdout)
    with tarfile.open(os.path.join(out, "artifacts.txz"), "w:xz") as t:
        t.add(arts, arcname="artifacts")
    shutil.rmtree(arts)
    print(f"{len(lines)} runs in {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
