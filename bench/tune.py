#!/usr/bin/env python3
"""Tuning mode: time candidate kernel variants per shape on the GPU and write
the tuning database that qf-select-tiling reads (`tuning-db=<file>`).

  # on the compiler machine: one artifact per (shape, candidate tiling)
  python3 bench/tune.py prepare --build build --batch 1
  # on the GPU machine, scripts/gpu-round.sh runs them (artifacts/runs.txt)
  # back here: the fastest candidate per shape -> the database
  python3 bench/tune.py select gpu-out/results -o bench/tuning-db.json
"""
import argparse
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_step_ir import ENCODINGS, MODELS, projections  # noqa: E402

# Matvec candidates: (block_n, k_unroll, split_k). The generator's contract:
# 4 warps per block (8 when split_k = 8), rows per warp = block_n * split_k /
# warps, k_unroll x rows x 16 B <= 128 B of codes in flight per lane.
CANDIDATES = [
    (8, 2, 1), (16, 1, 1), (4, 2, 2), (2, 2, 4),   # 2-4 rows, 64 B in flight
    (8, 4, 1), (16, 2, 1), (32, 1, 1),             # 128 B in flight
    (8, 1, 2), (8, 2, 2), (16, 1, 2), (4, 4, 2),   # 4-8 rows, split 2
    (4, 2, 4), (4, 1, 4),                          # split 4, 4 rows
]


def tiling_text(batch, block_n, unroll, split):
    return (f"matvec, block_m = {batch}, block_n = {block_n}, "
            f"k_unroll = {unroll}, split_k = {split}")


def variant_ir(batch, n, k, enc, tiling):
    w = f"!qf.weight<{n}x{k}, #qf.enc<{enc}>>"
    return (f"func.func @v(%x: tensor<{batch}x{k}xf16>) -> tensor<{batch}x{n}xf16> {{\n"
            f"  %w = qf.weight_ref \"w\" : {w}\n"
            f"  %y = qf.fused_matmul %x, %w {{tiling = #qf.tiling<{tiling}>}}"
            f" : tensor<{batch}x{k}xf16>, {w} -> tensor<{batch}x{n}xf16>\n"
            f"  return %y : tensor<{batch}x{n}xf16>\n}}\n")


def prepare(args):
    folder = os.path.join("artifacts", "tune")
    os.makedirs(folder, exist_ok=True)
    runs = open(os.path.join("artifacts", "runs.txt"), "a")
    compile_tool = os.path.join(args.build, "bin", "qfuse-compile")
    for model in args.models:
        for encoding in args.encodings:
            enc = ENCODINGS[encoding]
            paths, gemms = [], []
            for name, n, k in projections(model):
                if args.only and name not in args.only:
                    continue
                gemms.append(f"--gemm {args.batch}x{n}x{k}")
                for block_n, unroll, split in CANDIDATES:
                    tiling = tiling_text(args.batch, block_n, unroll, split)
                    base = (f"{model}-{encoding}-{name}-b{args.batch}"
                            f"-n{block_n}u{unroll}s{split}")
                    src = os.path.join(folder, base + ".mlir")
                    with open(src, "w") as f:
                        f.write(variant_ir(args.batch, n, k, enc, tiling))
                    out = os.path.join(folder, base + ".qfa")
                    r = subprocess.run([compile_tool, src, "-o", out],
                                       capture_output=True, text=True)
                    os.remove(src)
                    if r.returncode != 0:  # a candidate this shape cannot take
                        continue
                    paths.append(f"--artifact {out}")
            runs.write(f"tune-{model}-{encoding}-b{args.batch} "
                       f"{' '.join(sorted(set(gemms)))} {' '.join(paths)} "
                       f"--placeholder-weights\n")
    runs.close()


def select(args):
    best = {}
    for path in glob.glob(os.path.join(args.results, "tune-*.json")):
        run = json.load(open(path))
        for p in run.get("artifact_plans", []):
            name = os.path.basename(p["artifact"]).replace(".qfa", "")
            variant = name.rsplit("-", 1)[1]  # n4u4s1
            block_n = int(variant[1:variant.index("u")])
            unroll = int(variant[variant.index("u") + 1:variant.index("s")])
            split = int(variant[variant.index("s") + 1:])
            shape = p["weight_shapes"][0]
            key = (p["batch"], shape["n"], shape["k"], shape["encoding"])
            ms = p["stats"]["median_ms"]
            if key not in best or ms < best[key][0]:
                best[key] = (ms, tiling_text(p["batch"], block_n, unroll, split))
    db = [{"m": m, "n": n, "k": k, "encoding": enc, "tiling": t,
           "measured_us": round(ms * 1e3, 3)}
          for (m, n, k, enc), (ms, t) in sorted(best.items())]
    with open(args.output, "w") as f:
        json.dump(db, f, indent=1)
        f.write("\n")
    print(f"tune: {len(db)} shapes -> {args.output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--build", default="build")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--models", nargs="+", default=sorted(MODELS))
    p.add_argument("--encodings", nargs="+", default=["int4-g128", "nf4"])
    p.add_argument("--only", nargs="+", help="projections to tune (default all)")
    s = sub.add_parser("select")
    s.add_argument("results")
    s.add_argument("-o", "--output", default="bench/tuning-db.json")
    args = parser.parse_args()
    prepare(args) if args.cmd == "prepare" else select(args)


if __name__ == "__main__":
    main()
