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
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_step_ir import MODELS, encoding_text, projections  # noqa: E402
from qfuse.tune import list_tilings, tiling_label  # noqa: E402  (decode_step_ir's path)
from qfuse.atomic import write_json  # noqa: E402
from qfuse.records import read_json, record_paths  # noqa: E402

# The candidates come from the compiler (`qfuse-compile --list-tilings`,
# lib/Dialect/QF/Transforms/CostModel.cpp: listTilingCandidates), the one
# definition of the space: up to batch 8 the matvec's (block_n, k_unroll,
# split_k), past it the tensor-core kernel's (block_m, block_n, split_k,
# block_k, stages, cluster_k) the time model is fitted on, on sm_90a the
# wgmma kernel's, from batch 64 the dequantize + cuBLAS fallback. File labels:
# n<block_n>u<k_unroll>s<split_k>[v<vec_bytes>] (matvec),
# M<block_m>N<block_n>S<split_k>K<block_k>T<stages>C<cluster_k> (mma; W for
# wgmma), D (dequant_gemm): qfuse.tune.tiling_label.


def mma_tiling_text(label):
    m = re.fullmatch(r"([MW])(\d+)N(\d+)S(\d+)K(\d+)T(\d+)(?:C(\d+))?",
                     label)
    kernel = "wgmma" if m.group(1) == "W" else "mma"
    block_m, block_n, split, block_k, stages = map(int, m.groups()[1:6])
    cluster = int(m.group(7) or 1)
    text = (f"{kernel}, block_m = {block_m}, block_n = {block_n}, "
            f"block_k = {block_k}, split_k = {split}, stages = {stages}")
    return text + (f", cluster_k = {cluster}" if cluster > 1 else "")


def candidates(batch, n, k, enc, chip, gated=False, mma_at_small_batch=False,
               top=0):
    """(label, tiling text) pairs of one shape at one batch, as the compiler
    lists them. Up to batch 8 the matvec's, plus (mma_at_small_batch) the
    tensor-core kernel's, to measure where one overtakes the other."""
    extra = ["--tensor-core-min-batch=1"] if mma_at_small_batch else []
    listed = list_tilings(n, k, enc, [batch], chip, top, gated, extra)[batch]
    return [(tiling_label(c["tiling"]), c["tiling"]) for c in listed
            if mma_at_small_batch or batch > 8 or c["kernel"] == "matvec"]


def tiling_from_label(batch, label):
    if label == "D":
        return "dequant_gemm"
    if label[0] in "MW":
        return mma_tiling_text(label)
    m = re.fullmatch(r"n(\d+)u(\d+)s(\d+)(?:v(\d+))?", label)
    block_n, unroll, split = map(int, m.groups()[:3])
    text = tiling_text(batch, block_n, unroll, split)
    return text + (f", vec_bytes = {m.group(4)}" if m.group(4) else "")


def tiling_text(batch, block_n, unroll, split):
    return (f"matvec, block_m = {batch}, block_n = {block_n}, "
            f"k_unroll = {unroll}, split_k = {split}")


def variant_ir(batch, n, k, enc, tiling, gated=False):
    """One fused matmul of the tiling; gated: gate and up weights of N rows
    each with the silu_mul epilogue (its database entry is keyed by 2N)."""
    w = f"!qf.weight<{n}x{k}, #qf.enc<{enc}>>"
    up = f" up(%u : {w})" if gated else ""
    act = ", activation = #qf<activation silu_mul>" if gated else ""
    return (f"func.func @v(%x: tensor<{batch}x{k}xf16>) -> tensor<{batch}x{n}xf16> {{\n"
            f"  %w = qf.weight_ref \"w\" : {w}\n"
            + (f"  %u = qf.weight_ref \"u\" : {w}\n" if gated else "") +
            f"  %y = qf.fused_matmul %x, %w{up} {{tiling = #qf.tiling<{tiling}>{act}}}"
            f" : tensor<{batch}x{k}xf16>, {w} -> tensor<{batch}x{n}xf16>\n"
            f"  return %y : tensor<{batch}x{n}xf16>\n}}\n")


def prepare(args):
    folder = os.path.join("artifacts", "tune")
    os.makedirs(folder, exist_ok=True)
    runs = open(os.path.join("artifacts", "runs.txt"), "a")
    compile_tool = os.path.join(args.build, "bin", "qfuse-compile")
    os.environ.setdefault("QFUSE_COMPILE", os.path.abspath(compile_tool))
    for model in args.models:
        for encoding in args.encodings:
            enc = encoding_text(encoding)
            # File and run names: a literal #qf.enc<...> becomes its words.
            tag = re.sub(r"[^A-Za-z0-9.]+", "_", encoding).strip("_")
            paths, gemms = [], []
            for name, n, k in projections(model):
                if args.only and name not in args.only:
                    continue
                if args.gated:
                    if name != "gate_proj":
                        continue
                    name = "gate_up"
                # cuBLAS runs gate and up as one GEMM of 2N rows.
                gemms.append(f"--gemm {args.batch}x{2 * n if args.gated else n}x{k}")
                for label, tiling in candidates(args.batch, n, k, enc,
                                                args.chip, args.gated,
                                                args.mma, args.top):
                    if args.only_wgmma and not label.startswith("W"):
                        continue
                    base = f"{model}-{tag}-{name}-b{args.batch}-{label}"
                    src = os.path.join(folder, base + ".mlir")
                    with open(src, "w") as f:
                        f.write(variant_ir(args.batch, n, k, enc, tiling,
                                           args.gated))
                    out = os.path.join(folder, base + ".qfa")
                    r = subprocess.run([compile_tool, src, "-o", out,
                                        f"--chip={args.chip}"],
                                       capture_output=True, text=True)
                    os.remove(src)
                    if r.returncode != 0:  # a candidate this shape cannot take
                        continue
                    paths.append(f"--artifact {out}")
            kind = ("-gated" if args.gated else "") + (
                "-sm90a" if args.chip == "sm_90a" else "")
            runs.write(f"tune-{model}-{tag}{kind}-b{args.batch} "
                       f"{' '.join(sorted(set(gemms)))} {' '.join(paths)} "
                       f"--placeholder-weights\n")
    runs.close()


def select(args):
    """The fastest variant per shape. wgmma variants (W labels) run on
    sm_90a only: they compete for that target's entries ("chip": "sm_90a",
    written where one beats every other variant), the rest for the entries
    of every target."""
    best, best_arch = {}, {}

    def offer(table, key, ms, tiling):
        if key not in table or ms < table[key][0]:
            table[key] = (ms, tiling)

    for path in record_paths(args.results, "tune-*"):
        run = read_json(path)
        for p in run.get("artifact_plans", []):
            name = os.path.basename(p["artifact"]).replace(".qfa", "")
            variant = name.rsplit("-", 1)[1]  # n4u4s1, M16N32S4K64T3, W64...
            shape = p["weight_shapes"][0]
            # A gated variant (gate and up, N rows each) is keyed by 2N.
            rows = shape["n"] * len(p["weight_shapes"])
            key = (p["batch"], rows, shape["k"], shape["encoding"])
            ms = p["stats"]["median_ms"]
            tiling = tiling_from_label(p["batch"], variant)
            if not variant.startswith("W"):
                offer(best, key, ms, tiling)
            offer(best_arch, key, ms, tiling)
    # Entries measured in other rounds (other batches) are kept.
    if os.path.exists(args.output) and not args.replace:
        for e in json.load(open(args.output)):
            key = (e["m"], e["n"], e["k"], e["encoding"])
            entry = (e["measured_us"] / 1e3, e["tiling"])
            if e.get("chip") == "sm_90a":
                best_arch.setdefault(key, entry)
            else:
                best.setdefault(key, entry)
    for key, entry in best.items():
        offer(best_arch, key, *entry)
    db = [{"m": m, "n": n, "k": k, "encoding": enc, "tiling": t,
           "measured_us": round(ms * 1e3, 3)}
          for (m, n, k, enc), (ms, t) in sorted(best.items())]
    db += [{"m": m, "n": n, "k": k, "encoding": enc, "tiling": t,
            "measured_us": round(ms * 1e3, 3), "chip": "sm_90a"}
           for (m, n, k, enc), (ms, t) in sorted(best_arch.items())
           if t.startswith("wgmma")]
    # Renamed into place when complete: an interrupted select keeps the
    # database it started from.
    write_json(args.output, db, indent=1)
    print(f"tune: {len(db)} entries -> {args.output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--build", default="build")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--models", nargs="+", default=sorted(MODELS))
    p.add_argument("--encodings", nargs="+", default=["int4-g128", "nf4"])
    p.add_argument("--only", nargs="+", help="projections to tune (default all)")
    p.add_argument("--chip", default="sm_90",
                   help="target; sm_90a adds the wgmma candidates")
    p.add_argument("--only-wgmma", action="store_true",
                   help="with --chip sm_90a: the wgmma candidates alone")
    p.add_argument("--gated", action="store_true",
                   help="the gate/up projections fused with silu_mul "
                        "(database key N = 2 x gate rows)")
    p.add_argument("--mma", action="store_true",
                   help="up to batch 8, the tensor-core kernel's candidates too")
    p.add_argument("--top", type=int, default=0,
                   help="at most this many candidates per kernel family, as "
                        "the compiler ranks them (default 0: all)")
    s = sub.add_parser("select")
    s.add_argument("results")
    s.add_argument("-o", "--output", default="bench/tuning-db.json")
    s.add_argument("--replace", action="store_true",
                   help="drop the entries of the existing database")
    args = parser.parse_args()
    prepare(args) if args.cmd == "prepare" else select(args)


if __name__ == "__main__":
    main()
