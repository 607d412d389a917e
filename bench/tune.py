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
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_step_ir import MODELS, encoding_text, projections  # noqa: E402
from qfuse.atomic import write_json  # noqa: E402

# Matvec candidates: (block_n, k_unroll, split_k). The generator's contract:
# 4 warps per block (8 when split_k = 8), rows per warp = block_n * split_k /
# warps, k_unroll x rows x 16 B <= 128 B of codes in flight per lane.
CANDIDATES = [
    (8, 2, 1), (16, 1, 1), (4, 2, 2), (2, 2, 4),   # 2-4 rows, 64 B in flight
    (8, 4, 1), (16, 2, 1), (32, 1, 1),             # 128 B in flight
    (8, 1, 2), (8, 2, 2), (16, 1, 2), (4, 4, 2),   # 4-8 rows, split 2
    (4, 2, 4), (4, 1, 4),                          # split 4, 4 rows
]


# Tensor-core candidates (batch > 8): (block_n, split_k, block_k, stages);
# block_m follows the batch (16 up to 64, and 128 from batch 128, where a
# decoded B fragment then feeds 8 m tiles). The generator rejects what does
# not fit (shared memory, divisibility); such candidates are skipped.
# The last entry, cluster_k, splits K across the blocks of a cluster (sm_90).
MMA_CANDIDATES = [
    (bn, s, bk, st, 1)
    for bn, s in [(128, 1), (128, 2), (64, 2), (64, 4), (32, 4), (32, 8)]
    for bk, st in [(64, 3), (64, 4), (128, 3)]
] + [
    (bn, s, bk, st, c)
    for bn, s in [(128, 1), (128, 2), (64, 2), (64, 4)]
    for bk, st in [(64, 4), (128, 3)]
    for c in [2, 4]
]
MMA_LARGE_CANDIDATES = [
    (bn, s, 64, st, c)
    for bn, s in [(128, 1), (64, 1), (64, 2), (32, 2), (32, 4)]
    for st in [3, 4]
    for c in [1, 2]
]


# wgmma candidates (--chip sm_90a, batch > 8): a warpgroup of four 32-row
# warps per k group (block_n = 128), block_k = 64; (split_k, stages,
# cluster_k), block_m 64 and 128 from batch 64, else the batch rounded up
# to 16.
WGMMA_CANDIDATES = [(s, st, c) for s in (1, 2, 4) for st in (3, 4)
                    for c in (1, 2)]


def mma_label(block_m, block_n, split, block_k, stages, cluster=1,
              kind="M"):
    return f"{kind}{block_m}N{block_n}S{split}K{block_k}T{stages}C{cluster}"


def mma_tiling_text(label):
    import re
    m = re.fullmatch(r"([MW])(\d+)N(\d+)S(\d+)K(\d+)T(\d+)(?:C(\d+))?",
                     label)
    kernel = "wgmma" if m.group(1) == "W" else "mma"
    block_m, block_n, split, block_k, stages = map(int, m.groups()[1:6])
    cluster = int(m.group(7) or 1)
    text = (f"{kernel}, block_m = {block_m}, block_n = {block_n}, "
            f"block_k = {block_k}, split_k = {split}, stages = {stages}")
    return text + (f", cluster_k = {cluster}" if cluster > 1 else "")


def candidates(batch, mma_at_small_batch=False, wgmma=False):
    """(label, tiling text) pairs for one batch size. Up to batch 8 these
    are the matvec's, plus (mma_at_small_batch) the tensor-core kernel's
    with block_m = 16, to measure where one overtakes the other."""
    if batch <= 8:
        out = [(f"n{bn}u{u}s{s}", tiling_text(batch, bn, u, s))
               for bn, u, s in CANDIDATES]
        if mma_at_small_batch:
            for bn, s, bk, st, c in MMA_CANDIDATES:
                label = mma_label(16, bn, s, bk, st, c)
                out.append((label, mma_tiling_text(label)))
        return out
    out = []
    block_ms = [min(64, (batch + 15) // 16 * 16)]
    if batch > 64:
        block_ms.append(32)
    if batch >= 128:
        block_ms.append(128)
    if 16 < batch <= 64:  # several m blocks streaming one weight tile (L2)
        block_ms.append(16)
    cands = MMA_CANDIDATES if batch <= 32 else MMA_LARGE_CANDIDATES
    for block_m in block_ms:
        for bn, s, bk, st, c in cands:
            label = mma_label(block_m, bn, s, bk, st, c)
            out.append((label, mma_tiling_text(label)))
    if wgmma:
        wgmma_ms = (64, 128) if batch >= 64 else ((batch + 15) // 16 * 16,)
        for bm in wgmma_ms:
            for s, st, c in WGMMA_CANDIDATES:
                label = mma_label(bm, 128, s, 64, st, c, kind="W")
                out.append((label, mma_tiling_text(label)))
    return out


def tiling_from_label(batch, label):
    if label[0] in "MW":
        return mma_tiling_text(label)
    block_n = int(label[1:label.index("u")])
    unroll = int(label[label.index("u") + 1:label.index("s")])
    split = int(label[label.index("s") + 1:])
    return tiling_text(batch, block_n, unroll, split)


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
                for label, tiling in candidates(args.batch, args.mma,
                                                args.chip == "sm_90a"):
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

    for path in glob.glob(os.path.join(args.results, "tune-*.json")):
        run = json.load(open(path))
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
    s = sub.add_parser("select")
    s.add_argument("results")
    s.add_argument("-o", "--output", default="bench/tuning-db.json")
    s.add_argument("--replace", action="store_true",
                   help="drop the entries of the existing database")
    args = parser.parse_args()
    prepare(args) if args.cmd == "prepare" else select(args)


if __name__ == "__main__":
    main()
