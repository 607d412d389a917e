#!/usr/bin/env python3
"""Is the mma.sync kernel at batches 24-128 short of warps? Every tiling of
a wider space than the compiler lists past batch 32 (block_m 16-64, split_k
and cluster_k up to 8, so that a launch holds 8-32 warps an SM), on the
TRAINING shapes (Llama-3-8B's projections; the zoo stays the test set),
beside the compiler's own listed candidates and its default. One artifact
per (projection, batch, tiling), named as bench/tune.py names them, so
that bench/cost-model/fit.py reads the results; one run per (projection,
batch) that times them all beside cuBLAS fp16 in one process on
placeholder weights, and one run per batch that checks every tiling of
that batch on k_proj with random weights (--check).

  python3 bench/mma-parallel/make-sweep.py [build dir] [out dir]
  BATCHES='32 64 128' PROJS='q_proj k_proj gate_proj down_proj' JOBS=2
"""
import concurrent.futures
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python-frontend"))
from qfuse.tune_candidates import list_tilings, tiling_label, variant_ir  # noqa: E402

SHAPES = {"q_proj": (4096, 4096), "k_proj": (1024, 4096),
          "gate_proj": (14336, 4096), "down_proj": (4096, 14336)}
ENC = "int4, group = 128, scale = f16"
SMS = 132


def wide_tilings(m, n, k):
    """block_m 16-64, block_n 32 or 64, split_k and cluster_k 1-8 (block_k
    64, 3 stages): those with 2-16 warps a block, a K step for every slice,
    at least 128 blocks and 8-32 warps an SM."""
    out = []
    top = min(64, -(-m // 16) * 16)
    for bm in (b for b in (16, 32, 64) if b <= top):
        for bn in (32, 64):
            for split in (1, 2, 4, 8):
                for cluster in (1, 2, 4, 8):
                    warps = bn // 32 * split
                    blocks = math.ceil(m / bm) * math.ceil(n / bn) * cluster
                    if (not 2 <= warps <= 16 or k // 64 < split * cluster
                            or blocks < 128 or not 8 * SMS <= blocks * warps <= 32 * SMS):
                        continue
                    out.append(f"mma, block_m = {bm}, block_n = {bn}, block_k = 64, "
                               f"split_k = {split}, stages = 3, cluster_k = {cluster}")
    return out


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    out = sys.argv[2] if len(sys.argv) > 2 else "build-mma-parallel"
    os.environ.setdefault("QFUSE_BUILD_DIR", build)
    tool = os.path.join(build, "bin", "qfuse-compile")
    batches = [int(b) for b in os.environ.get("BATCHES", "32 64 128").split()]
    projs = os.environ.get("PROJS", " ".join(SHAPES)).split()
    os.makedirs(os.path.join(out, "artifacts"), exist_ok=True)
    jobs = []   # (proj, m, label, tiling, default)
    for proj in projs:
        n, k = SHAPES[proj]
        listed = list_tilings(n, k, ENC, batches, top=6)
        for m in batches:
            cands = {}
            for c in listed[m]:
                if c["kernel"] == "mma":
                    cands[tiling_label(c["tiling"])] = (c["tiling"], c["default"])
            for t in wide_tilings(m, n, k):
                cands.setdefault(tiling_label(t), (t, False))
            for label, (t, default) in cands.items():
                jobs.append((proj, m, label, t, default))

    def compile_one(job):
        proj, m, label, t, _ = job
        n, k = SHAPES[proj]
        name = f"llama3-8b-int4-{proj}-b{m}-{label}"
        mlir = os.path.join(out, "artifacts", name + ".mlir")
        with open(mlir, "w") as f:
            f.write(variant_ir(m, n, k, ENC, t, name=name))
        argv = [tool, mlir, f"--batch-sizes={m}", "--chip=sm_90", "-o", mlir[:-5] + ".qfa"]
        proc = subprocess.run(argv, capture_output=True, text=True)
        return job, " ".join(argv), proc.returncode, proc.stderr.strip().splitlines()[-1:]

    done = {}
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as pool:
        for job, cmd, rc, err in pool.map(compile_one, jobs):
            if rc == 0:
                done.setdefault((job[0], job[1]), []).append(job)
            else:
                print(f"refused {job[0]} b{job[1]} {job[2]}: {err}")
    runs = []
    for (proj, m), got in sorted(done.items()):
        n, k = SHAPES[proj]
        arts = " ".join(f"--artifact artifacts/llama3-8b-int4-{proj}-b{m}-{j[2]}.qfa"
                        for j in got)
        runs.append(f"par-llama3-8b-int4-{proj}-b{m} {arts} --batch {m} "
                    f"--gemm {m}x{n}x{k} --placeholder-weights")
    for m in batches:
        labels = sorted({j[2] for (p, mm), got in done.items() if mm == m for j in got})
        check = []
        for label in labels:
            t = next(j[3] for got in done.values() for j in got if j[1] == m and j[2] == label)
            job = ("k_proj", m, label, t, False)
            if job not in done.get(("k_proj", m), []):
                _, _, rc, err = compile_one(job)
                if rc != 0:
                    print(f"refused k_proj b{m} {label} (check): {err}")
                    continue
            check.append(f"--artifact artifacts/llama3-8b-int4-k_proj-b{m}-{label}.qfa")
        runs.append(f"check-b{m} {' '.join(check)} --batch {m} --check-only")
    with open(os.path.join(out, "runs.txt"), "w") as f:
        f.write("\n".join(runs) + "\n")
    with open(os.path.join(out, "defaults.tsv"), "w") as f:
        f.writelines(f"{j[0]}\t{j[1]}\t{j[2]}\n" for got in done.values() for j in got if j[4])
    with open(os.path.join(out, "COMPILE"), "w") as f:
        f.write(f"qfuse-compile <proj>-b<M>-<label>.mlir --batch-sizes=<M> --chip=sm_90 "
                f"(qf.fused_matmul with the tiling; {ENC})\n")
    print(f"{sum(len(g) for g in done.values())} artifacts, {len(runs)} runs -> {out}")


if __name__ == "__main__":
    main()
