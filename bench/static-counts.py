#!/usr/bin/env python3
"""Static instruction counts of the kernels qfuse-compile makes for one
weight per format: the PTX of the mma.sync step loop's basic block (the
block with the most mma), ptxas's static SASS count of each kernel (its
.text size / 16) and its registers. A proxy where no GPU is at hand: a
count says how much a kernel issues per step, not how fast it runs.

    python3 bench/static-counts.py [--compiler build/bin/qfuse-compile]
        [--formats int4-g128,nf4,nvfp4,mxfp4] [--batches 1,64]
        [--shape 4096x4096] [--act f16] [--chip sm_90a] [--flag=-...]

Prints a table and, with --json FILE, writes the counts. ptxas is
$PTXAS or /usr/local/cuda/bin/ptxas.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python-frontend"))
from qfuse.encodings import encoding_text  # noqa: E402
from cubin import text_sizes  # noqa: E402


def mma_loop_ptx(ptx):
    """{kernel: PTX instructions of its basic block with the most mma}."""
    counts, kernel, block = {}, None, collections.Counter()
    best = collections.defaultdict(lambda: (0, 0))  # kernel -> (mma, size)
    for line in ptx.splitlines():
        s = line.strip()
        m = re.match(r"\.visible \.entry (\w+)\(", s)
        if m:
            kernel = m.group(1)
        if re.match(r"^\$?[\w$]+:$", s) or s == "}" or m:
            if kernel and block["mma"] > best[kernel][0]:
                best[kernel] = (block["mma"], block["all"])
            block = collections.Counter()
            continue
        if not s or s.startswith(("//", ".", "{", ")")):
            continue
        block["all"] += 1
        block["mma"] += s.lstrip("@%!p0123456789 ").startswith(
            ("mma.", "wgmma.mma_async"))
    for k, (mma, size) in best.items():
        counts[k] = size if mma else None
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler",
                    default=os.path.join(ROOT, "build", "bin", "qfuse-compile"))
    ap.add_argument("--formats", default="int4-g128,nf4,nvfp4,mxfp4")
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--shape", default="4096x4096")
    ap.add_argument("--act", default="f16", choices=["f16", "bf16"])
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--flag", action="append", default=[],
                    help="an extra qfuse-compile argument (repeatable)")
    ap.add_argument("--json")
    args = ap.parse_args()
    ptxas = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
    n, k = args.shape.split("x")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats.split(","):
            weight = f"!qf.weight<{n}x{k}, #qf.enc<{encoding_text(fmt)}>>"
            x, y = f"tensor<?x{k}x{args.act}>", f"tensor<?x{n}x{args.act}>"
            mlir = os.path.join(tmp, "w.mlir")
            with open(mlir, "w") as f:
                f.write(f'func.func @f(%x: {x}) -> {y} {{\n'
                        f'  %w = qf.weight_ref "w" : {weight}\n'
                        f'  %y = qf.matmul %x, %w : {x}, {weight} -> {y}\n'
                        f'  return %y : {y}\n}}\n')
            for batch in args.batches.split(","):
                ptx, cubin = os.path.join(tmp, "w.ptx"), os.path.join(tmp, "w.cubin")
                subprocess.run([args.compiler, mlir, "--emit=ptx",
                                f"--batch-sizes={batch}", f"--chip={args.chip}",
                                *args.flag, "-o", ptx],
                               check=True, capture_output=True)
                info = subprocess.run([ptxas, f"-arch={args.chip}", "-v", ptx,
                                       "-o", cubin], check=True,
                                      capture_output=True, text=True).stderr
                regs = dict(re.findall(
                    r"Function properties for (\w+)[\s\S]*?Used (\d+) registers",
                    info))
                loops = mma_loop_ptx(open(ptx).read())
                for kernel, size in sorted(text_sizes(open(cubin, "rb").read()).items()):
                    rows.append({"format": fmt, "batch": int(batch),
                                 "kernel": kernel, "sass": size // 16,
                                 "registers": int(regs.get(kernel, 0)),
                                 "mma_loop_ptx": loops.get(kernel)})
    print("| format | batch | kernel | mma loop PTX | SASS | registers |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['format']} | {r['batch']} | {r['kernel']} | "
              f"{r['mma_loop_ptx'] or '-'} | {r['sass']} | {r['registers']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"compiler": args.compiler, "flags": args.flag,
                       "shape": args.shape, "act": args.act,
                       "chip": args.chip, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
