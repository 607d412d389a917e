#!/usr/bin/env python3
"""Compiles the fallback A/B (issues 18 and 20) on zoo shapes of models the
tuning database never saw: int4-g128 as a user compiles it (defaults), the
same weights forced onto the dequantize + cuBLAS fallback (a tuning database
whose entries are #qf.tiling<dequant_gemm>) or kept off it
(--dequant-gemm-min-batch=0: mma.sync at every large batch), and act_order
int4-g128, at batches 16 to 1024. bench/fallback/run-fallback-ab.sh times
them against cuBLAS fp16 in the same process on the GPU machine.

  bench/fallback/make-fallback-ab.py [--build build] [--out DIR]
      [--shapes NxK,...] [--modes default,fallback,mma,act-order]

The first round (2026-12-02) used the default shapes (Qwen2.5-7B's) and
modes default, fallback, act-order; it set kDequantGemmMinM. The second
checks that choice on other models' shapes (--shapes) with default, mma and
act-order.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

SHAPES = [(3584, 3584), (18944, 3584), (3584, 18944), (1024, 5120)]
BATCHES = [16, 64, 128, 256, 512, 1024]
ENCODINGS = {
    "int4-g128": "int4, group = 128, scale = f16",
    "act-order": "int4, group = 128, scale = f16, act_order",
}


def mlir(n, k, enc):
    w = f"!qf.weight<{n}x{k}, #qf.enc<{enc}>>"
    return (f"func.func @w(%x: tensor<?x{k}xf16>) -> tensor<?x{n}xf16> {{\n"
            f'  %w = qf.weight_ref "w" : {w}\n'
            f"  %y = qf.matmul %x, %w : tensor<?x{k}xf16>, {w} -> tensor<?x{n}xf16>\n"
            f"  return %y : tensor<?x{n}xf16>\n}}\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build")
    p.add_argument("--out", default=".devcarry/fallback")
    p.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in SHAPES))
    p.add_argument("--modes", default="default,fallback,act-order")
    a = p.parse_args()
    shapes = [tuple(map(int, s.split("x"))) for s in a.shapes.split(",")]
    modes = a.modes.split(",")
    out = pathlib.Path(a.out)
    (out / "artifacts").mkdir(parents=True, exist_ok=True)
    compile_ = str(pathlib.Path(a.build).resolve() / "bin" / "qfuse-compile")
    batches = ",".join(map(str, BATCHES))
    runs, commands = [], []
    for n, k in shapes:
        forced = [{"m": m, "n": n, "k": k, "encoding": ENCODINGS["int4-g128"],
                   "tiling": "dequant_gemm"} for m in BATCHES]
        db = out / f"force-{n}x{k}.json"
        db.write_text(json.dumps(forced, indent=1))
        variants = {"default": ("int4-g128", []),
                    "fallback": ("int4-g128", [f"--tuning-db={db}"]),
                    "mma": ("int4-g128", ["--dequant-gemm-min-batch=0"]),
                    "act-order": ("act-order", [])}
        for mode in modes:
            enc, extra = variants[mode]
            name = f"{mode}-{n}x{k}"
            src = out / "artifacts" / f"{name}.mlir"
            src.write_text(mlir(n, k, ENCODINGS[enc]))
            cmd = [compile_, str(src), f"--batch-sizes={batches}",
                   "-o", str(out / "artifacts" / f"{name}.qfa")] + extra
            commands.append(" ".join(cmd))
            subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
            gemms = " ".join(f"--gemm {m}x{n}x{k}" for m in BATCHES)
            runs.append(f"{name} --artifact {out}/artifacts/{name}.qfa "
                        f"--batch {batches} {gemms} --placeholder-weights")
    (out / "runs.txt").write_text("\n".join(runs) + "\n")
    (out / "COMPILE").write_text("\n".join(commands) + "\n")
    (out / "COMMIT").write_text(subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True,
        text=True).stdout)
    print(f"{len(runs)} runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
