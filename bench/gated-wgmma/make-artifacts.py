#!/usr/bin/env python3
"""Gate/up (silu_mul) candidates on explicit tilings, for the GPU round that
picks the gated wgmma default (issue 18): every (shape, batch, tiling) below
compiled with --chip=sm_90a into OUT/artifacts, and OUT/runs.txt with one
qfuse-bench command per (shape, batch) timing them all in one process
against cuBLAS fp16 on the [M, 2N, K] gemm.

  bench/gated-wgmma/make-artifacts.py OUT SHAPES BATCHES [--default-only] [--plain]

SHAPES: NxK of one of gate/up (e.g. 14336x4096,5632x2048); BATCHES: 64,128.
--default-only compiles only the compiler's own pick (no tiling attribute):
the zoo's test of the default that the training shapes chose. --plain: one
weight of NxK (no silu_mul), with the plain wgmma tilings (split-K across a
cluster too) against the mma.sync rule's pick.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python-frontend"))
from qfuse import tune  # noqa: E402

ENC = "int4, group = 128, scale = f16"
TILINGS = {
    "mma": None,  # the mma.sync rule's pick: the default before gated wgmma
    "W64S1T3": "wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3",
    "W64S1T4": "wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 4",
    "W64S2T3": "wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 3",
    "W64S2T4": "wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4",
    "W128S1T3": "wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 3",
    "W128S1T4": "wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 4",
}

PLAIN_TILINGS = {
    "mma": None,
    "W64S1C1": "wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 4",
    "W64S2C1": "wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4",
    "W64S2C2": "wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4, cluster_k = 2",
    "W64S4C1": "wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 4, stages = 3",
    "W64S4C2": "wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 4, stages = 3, cluster_k = 2",
    "W64S1C2": "wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 4, cluster_k = 2",
}


def default_ir(m, n, k, name, gated=True):
    """The fused op without a tiling: qf-select-tiling picks it."""
    ir = tune.variant_ir(m, n, k, ENC, "mma", gated=gated, name=name)
    return ir.replace("tiling = #qf.tiling<mma>, ", "").replace(
        " {tiling = #qf.tiling<mma>}", "")


def main():
    out, shapes, batches = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    default_only = "--default-only" in sys.argv
    gated = "--plain" not in sys.argv
    prefix = "gu" if gated else "w"
    compiler = os.path.join(os.environ.get("QFUSE_BUILD_DIR", "build"), "bin", "qfuse-compile")
    os.makedirs(os.path.join(out, "artifacts"), exist_ok=True)
    runs = []
    for shape in shapes:
        n, k = (int(v) for v in shape.split("x"))
        for m in (int(b) for b in batches):
            arts = []
            labels = ({"default": None} if default_only
                      else TILINGS if gated else PLAIN_TILINGS)
            for label, tiling in labels.items():
                name = f"{prefix}{shape}-b{m}-{label}"
                chip = "sm_90a"
                if tiling:
                    ir = tune.variant_ir(m, n, k, ENC, tiling, gated=gated, name=name)
                else:
                    ir = default_ir(m, n, k, name, gated)
                    if label == "mma":  # the mma.sync rule: the op on sm_90
                        chip = "sm_90"
                src = os.path.join(out, name + ".mlir")
                art = os.path.join(out, "artifacts", name + ".qfa")
                with open(src, "w") as f:
                    f.write(ir)
                cmd = [compiler, src, "-o", art, f"--chip={chip}", "--emit=artifact"]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                os.remove(src)
                with open(os.path.join(out, "COMPILE"), "a") as f:
                    f.write(" ".join(cmd) + f"  # exit {proc.returncode}\n")
                if proc.returncode == 0:
                    arts.append(f"--artifact artifacts/{name}.qfa")
                else:
                    print(f"{name}: {proc.stderr.strip().splitlines()[-1]}", file=sys.stderr)
            rows = 2 * n if gated else n
            runs.append(f"{prefix}{shape}-b{m} " + " ".join(arts) +
                        f" --batch {m} --gemm {m}x{rows}x{k}")
    with open(os.path.join(out, "runs.txt"), "a") as f:
        f.write("\n".join(runs) + "\n")


if __name__ == "__main__":
    main()
