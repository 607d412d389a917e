#!/usr/bin/env python3
"""Pipeline depth of the tensor-core kernels at batches 24-512, on TRAINING
shapes only (Llama-3-8B and Qwen2.5-7B projections; the zoo stays the test
set). For each (shape, batch): the default a user gets (no tiling, sm_90a),
the time model's first mma.sync and wgmma candidates as listed, and each of
those with deeper cp.async pipelines (stages 6 and 8) and, for mma.sync,
block_k 128. Writes a folder bench/zoo/run-zoo.sh runs on the GPU machine:
one run per (shape, batch), every artifact --check'ed and timed against
cuBLAS fp16 in the same process.

MODE=wide (a grid of every kind of parallelism, wide()), MODE=kernel
(which kernel: mma.sync's first candidates and every wgmma tiling,
kernel_choice()), MODE=blockm (mma.sync at every block_m from 16 to the
batch, block_m()), MODE=mgrid (block_m 16-64 against every way of
splitting K, clusters of 4 too, m_grid()) and MODE=wgmma (the wgmma grid with deeper stages and
clusters of 4, wgmma_grid(deep=True)) time with placeholder weights
instead: they sweep tilings of the kernels the checked rounds cover.
FLAGS adds qfuse-compile flags to every compile (the default's too), e.g.
FLAGS=--qf-wgmma-producer.

  python3 bench/pipeline-depth/make-sweep.py [build dir] [out dir]
  SHAPES='name N K\n...' BATCHES=64,128 TOP=3 ENC='...' MODE=... JOBS=2
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python-frontend"))
from qfuse.tune import default_ir, list_tilings, tiling_label, variant_ir  # noqa: E402

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
out = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "build-depth")
os.environ.setdefault("QFUSE_COMPILE", os.path.join(build, "bin", "qfuse-compile"))
compile_tool = os.environ["QFUSE_COMPILE"]
SHAPES = [l.split() for l in os.environ.get("SHAPES", """l8b-q 4096 4096
l8b-kv 1024 4096
l8b-down 4096 14336
q7b-q 3584 3584
q7b-down 3584 18944""").splitlines()]
BATCHES = [int(b) for b in os.environ.get("BATCHES", "24,32,64,128,256,512").split(",")]
ENC = os.environ.get("ENC", "int4, group = 128, scale = f16")
TOP = int(os.environ.get("TOP", "3"))
MODE = os.environ.get("MODE", "depth")
# The tiling sweeps time with placeholder weights; the depth round checks.
SWEEP = MODE in ("wide", "kernel", "wgmma", "blockm", "mgrid")
FLAGS = os.environ.get("FLAGS", "").split()


def with_field(tiling, key, value):
    if re.search(rf"\b{key} = \d+", tiling):
        return re.sub(rf"\b{key} = \d+", f"{key} = {value}", tiling)
    return tiling + f", {key} = {value}"


def wide(m, n, k):
    """MODE=wide: a grid past the compiler's candidate space (block_k 128
    and clusters of 4 past batch 32, split_k up to 8), every kind of
    parallelism a launch of this kernel can have; the compiler refuses
    what does not fit (shared memory, warps)."""
    out = []
    block_ms = sorted({min(64, -(-m // 16) * 16)} | ({128} if m >= 128 else set()))
    for bm in block_ms:
        for bn in (32, 64, 128):
            for split in (1, 2, 4, 8):
                if bn // 32 * split > 16:
                    continue
                for bk, stages in ((64, 4), (128, 3)):
                    for cluster in (1, 2, 4):
                        if k // bk < split * cluster:
                            continue
                        t = (f"mma, block_m = {bm}, block_n = {bn}, block_k = {bk}, "
                             f"split_k = {split}, stages = {stages}")
                        out.append(t + (f", cluster_k = {cluster}" if cluster > 1 else ""))
    return out + wgmma_grid(m)


def mma_grid(m, k, block_ms, clusters):
    """mma.sync (mma.sp for 2:4) at each of `block_ms` up to the batch
    rounded to 16, block_n 32-128, split_k 1-4 and each of `clusters`
    (block_k 64, 4 stages)."""
    out = []
    for bm in block_ms:
        if bm > -(-m // 16) * 16:
            continue
        for bn in (32, 64, 128):
            for split in (1, 2, 4):
                for cluster in clusters:
                    if k // 64 < split * cluster:
                        continue
                    t = (f"mma, block_m = {bm}, block_n = {bn}, block_k = 64, "
                         f"split_k = {split}, stages = 4")
                    out.append(t + (f", cluster_k = {cluster}" if cluster > 1 else ""))
    return out


def block_m(m, n, k):
    """MODE=blockm: every block_m from 16 up to the batch (at most 64),
    clusters of 1-2: whether fewer rows a block pay for their repeated
    decode."""
    return mma_grid(m, k, (16, 32, 48, 64), (1, 2))


def m_grid(m, n, k):
    """MODE=mgrid: block_m 16, 32 and 64 against every way of splitting K,
    clusters of 4 too: whether more, smaller blocks (each decoding the
    weight again) or more K slices keep more warps busy past batch 16."""
    return mma_grid(m, k, (16, 32, 64), (1, 2, 4))


def wgmma_grid(m, deep=False):
    """Every wgmma tiling: block_m 64 and 128 (the batch rounded up to 16
    below 64), split_k 1-4, stages 3, 4, 6, clusters of 1 and 2; deep:
    split_k 1-2, stages 3-8, clusters of 1, 2 and 4."""
    out = []
    for bm in sorted({64, 128} if m >= 64 else {-(-m // 16) * 16}):
        for split in ((1, 2) if deep else (1, 2, 4)):
            for stages in ((3, 4, 6, 8) if deep else (3, 4, 6)):
                for cluster in ((1, 2, 4) if deep else (1, 2)):
                    t = (f"wgmma, block_m = {bm}, block_n = 128, block_k = 64, "
                         f"split_k = {split}, stages = {stages}")
                    out.append(t + (f", cluster_k = {cluster}" if cluster > 1 else ""))
    return out


def kernel_choice(m, listed):
    """MODE=kernel: which kernel, not which tiling: the time model's first
    mma.sync candidates (each also with block_m 64) and every wgmma
    tiling."""
    out = []
    for c in listed:
        if c["kernel"] != "mma":
            continue
        for t in (c["tiling"], with_field(c["tiling"], "block_m", 64)):
            if t not in out:
                out.append(t)
    return out + wgmma_grid(m)


def variants(listed):
    seen = []
    for c in listed:
        t = c["tiling"]
        kernel = c["kernel"]
        if kernel not in ("mma", "wgmma"):
            continue
        base = [t]
        if kernel == "mma":
            base.append(with_field(with_field(t, "block_k", 128), "stages", 3))
        for b in base:
            for stages in (None, 4, 6, 8):
                v = b if stages is None else with_field(b, "stages", stages)
                if v not in seen:
                    seen.append(v)
    return seen


os.makedirs(os.path.join(out, "artifacts"), exist_ok=True)
runs = open(os.path.join(out, "runs.txt"), "w")
count = 0
for name, n, k in SHAPES:
    n, k = int(n), int(k)
    listing = list_tilings(n, k, ENC, BATCHES, "sm_90a", TOP)
    for m in BATCHES:
        # The default a user gets (the matmul without a tiling), then the
        # candidates; a candidate the compiler refuses is left out.
        cands = {"wide": lambda: wide(m, n, k),
                 "kernel": lambda: kernel_choice(m, listing[m]),
                 "wgmma": lambda: wgmma_grid(m, deep=True),
                 "blockm": lambda: block_m(m, n, k),
                 "mgrid": lambda: m_grid(m, n, k),
                 "depth": lambda: variants(listing[m])}[MODE]()
        jobs = [("default", default_ir(m, n, k, ENC))] + [
            (tiling_label(t), variant_ir(m, n, k, ENC, t)) for t in cands]

        def build_one(job):
            label, ir = job
            a = os.path.join(out, "artifacts", f"{name}-b{m}-{label}.qfa")
            r = subprocess.run([compile_tool, "-", "-o", a, "--chip=sm_90a"] + FLAGS,
                               input=ir, capture_output=True, text=True)
            if r.returncode != 0:
                if label == "default" or not SWEEP:
                    print(f"skip {name} b{m} {label}: {r.stderr.strip().splitlines()[-1]}")
                return None
            return a
        with ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as pool:
            arts = [a for a in pool.map(build_one, jobs) if a]
        count += len(arts)
        rel = [os.path.relpath(a, os.path.join(here, "..", "..")) for a in arts]
        est = 3 + (0.2 if SWEEP else 0.6) * len(arts)
        check = "--placeholder-weights" if SWEEP else "--check"
        runs.write(f"{name}-b{m} {est:.0f} --batch {m} --gemm {m}x{n}x{k} {check} "
                   + " ".join(f"--artifact {r}" for r in rel) + "\n")
runs.close()
with open(os.path.join(out, "COMMIT"), "w") as f:
    f.write(subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True).stdout)
with open(os.path.join(out, "COMPILE"), "w") as f:
    f.write(f"MODE={MODE} TOP={TOP} BATCHES={','.join(map(str, BATCHES))} "
            f"ENC='{ENC}' FLAGS='{' '.join(FLAGS)}' bench/pipeline-depth/make-sweep.py; qfuse-compile "
            "--chip=sm_90a of each (shape, batch, tiling)\n")
print(f"{count} artifacts")
