#!/usr/bin/env python3
"""The zoo cells whose tensor-core kernel ptxas gives other registers under
two compilers: 12 zoo entries drawn at random (seed 11), int4-g128, NF4,
NVFP4 and int8 at batches 3-128, each compiled by both for sm_90a; the
registers per kernel come from the artifacts' cubins (.nv.info,
EIATTR_REGCOUNT). Writes [{run, batch, regs: [old, new]}].

  python3 bench/results/2026-12-06-s42/minncta/registers.py OLD NEW OUT.json
"""
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "zoo"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import zoo  # noqa: E402
from cubin import registers  # noqa: E402

def main(old, new, out):
    entries = zoo.derive(zoo.load_models())[0]
    pool = [e for e in entries if 1e6 <= e["n_total"] * e["k"] <= 120e6]
    picked = random.Random(11).sample(pool, 12)
    batches = "3,8,16,32,64,96,128"
    tmp = tempfile.mkdtemp()
    jobs = []
    for entry in picked:
        for fmt in ("int4-g128", "nf4", "nvfp4", "int8"):
            run = f"{entry['id']}-{fmt}"
            mlir = os.path.join(tmp, run + ".mlir")
            with open(mlir, "w") as f:
                f.write(zoo.emit(entry, fmt))
            for side, compiler in (("a", old), ("b", new)):
                jobs.append((run, [compiler, mlir, "--batch-sizes=" + batches,
                                   "--chip=sm_90a", "-o",
                                   os.path.join(tmp, f"{run}-{side}.qfa")]))
    with ThreadPoolExecutor(2) as pool_:
        list(pool_.map(lambda j: subprocess.run(j[1], capture_output=True), jobs))
    changed, cells = [], 0
    for run in sorted({j[0] for j in jobs}):
        paths = [os.path.join(tmp, f"{run}-{s}.qfa") for s in "ab"]
        if not all(map(os.path.exists, paths)):
            continue  # a format the entry's shape does not take
        a, b = (registers(base64.b64decode(json.load(open(p))["module"]["cubin_base64"]))
                for p in paths)
        for kernel, count in a.items():
            if "mma" not in kernel:
                continue
            cells += 1
            if count != b.get(kernel):
                changed.append({"run": run, "batch": int(kernel.rsplit("_m", 1)[1]),
                                "regs": [count, b.get(kernel)]})
    json.dump(changed, open(out, "w"), indent=1)
    print(f"{len(changed)} of {cells} tensor-core cells change registers")


if __name__ == "__main__":
    main(*sys.argv[1:4])
