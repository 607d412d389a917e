#!/usr/bin/env python3
"""Every matvec tiling the compiler lists for 2:4 weights at batch 1, on
bench/sparse24's default (training) shapes: is the batch-1 2:4 matvec short
of parallelism where K is long against N? One artifact per (shape,
encoding, candidate), and one run per (shape, encoding) that times
them all beside the default dense int4-g128 artifact and
cuBLAS fp16 in one process, on placeholder weights (a profile of
tilings whose kernel the checked rounds cover; CHECK=1 checks them all on
random weights instead, slower). Writes OUT/artifacts, OUT/runs.txt (the
bench/sparse24/run.sh format), OUT/COMPILE.

  python3 bench/sparse24/make-matvec-sweep.py [build dir] [out dir]
  SHAPES='3584x18944 4096x14336' ENCS='sp-int4 sp-f16' CHECK=1
  EXTRA='matvec, block_n = 4, split_k = 4; ...' (tilings the list leaves out)
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python-frontend"))
from qfuse.tune_candidates import list_tilings, tiling_label, variant_ir  # noqa: E402

ENCODINGS = {
    "sp-int4": "int4, group = 128, scale = f16, sparse = 2:4",
    "sp-f16": "f16, sparse = 2:4",
    "sp-int8": "int8, per_channel, scale = f16, sparse = 2:4",
    "int4": "int4, group = 128, scale = f16",
}


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    out = sys.argv[2] if len(sys.argv) > 2 else "build-sp-sweep"
    os.environ.setdefault("QFUSE_BUILD_DIR", build)
    compile_tool = os.path.join(build, "bin", "qfuse-compile")
    shapes = os.environ.get("SHAPES", "3584x18944 4096x14336 4096x4096").split()
    encs = os.environ.get("ENCS", "sp-int4").split()
    extra = [t.strip() for t in os.environ.get("EXTRA", "").split(";") if t.strip()]
    mode = "--check" if os.environ.get("CHECK") else "--placeholder-weights"
    os.makedirs(os.path.join(out, "artifacts"), exist_ok=True)
    runs, commands = [], []

    def compile_one(name, ir):
        mlir = os.path.join(out, "artifacts", name + ".mlir")
        with open(mlir, "w") as f:
            f.write(ir)
        argv = [compile_tool, mlir, "--batch-sizes=1", "-o", mlir[:-5] + ".qfa"]
        commands.append(" ".join(argv))
        subprocess.run(argv, check=True, capture_output=True)
        return f"artifacts/{name}.qfa"

    for shape in shapes:
        n, k = (int(v) for v in shape.split("x"))
        dense = compile_one(f"int4-{shape}-default",
                            variant_ir(1, n, k, ENCODINGS["int4"],
                                       list_tilings(n, k, ENCODINGS["int4"], [1])[1][0]["tiling"],
                                       name="int4-default"))
        for enc in encs:
            args = [f"--artifact {dense}"]
            cands = [c for c in list_tilings(n, k, ENCODINGS[enc], [1])[1]
                     if c["kernel"] == "matvec"]
            listed = {tiling_label(c["tiling"]) for c in cands}
            cands += [{"tiling": t, "default": False} for t in extra
                      if tiling_label(t) not in listed]
            for cand in cands:
                label = tiling_label(cand["tiling"]) + ("-default" if cand["default"] else "")
                name = f"{enc}-{shape}-{label}"
                args.append("--artifact " + compile_one(
                    name, variant_ir(1, n, k, ENCODINGS[enc], cand["tiling"], name=name)))
            runs.append(f"sweep-{enc}-{shape} " + " ".join(args)
                        + f" --batch 1 --gemm 1x{n}x{k} {mode}")
    with open(os.path.join(out, "runs.txt"), "w") as f:
        f.write("\n".join(runs) + "\n")
    with open(os.path.join(out, "COMPILE"), "w") as f:
        f.write("\n".join(commands) + "\n")
    print(f"{len(commands)} artifacts, {len(runs)} runs -> {out}")


if __name__ == "__main__":
    main()
