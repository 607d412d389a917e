#!/usr/bin/env python3
"""Gate/up with silu_mul as a model writes it (two qf.matmul and a
qf.silu_mul), compiled for sm_90a three ways: the default fusions (gated-mlp
forms the gated gate/up kernel), and without gated-mlp: gate and up as one
qf.group launch (shared-input) or two launches, then a silu_mul launch. For the GPU round
that says from which batch --fuse=default should leave gated-mlp out
(issue 18). Writes OUT/artifacts and OUT/runs.txt: one qfuse-bench command
per (shape, batch) timing the three in one process against cuBLAS fp16 on the
[M, 2N, K] gemm.

  bench/gated-wgmma/make-fusion-ab.py OUT SHAPES BATCHES

SHAPES: NxK of one of gate/up (e.g. 14336x4096,5632x2048); BATCHES: 96,128.
"""
import os
import subprocess
import sys

ENC = "int4, group = 128, scale = f16"
# The default fusions but gated-mlp: gate and up as one qf.group launch
# (shared-input), or as two launches of their own.
VARIANTS = (("gated", []),
            ("grouped", ["--fuse=epilogue,shared-input,act-order-norm,rotary-attention"]),
            ("separate", ["--fuse=epilogue,act-order-norm,rotary-attention"]))


def model_ir(m, n, k):
    x, y, w = f"tensor<{m}x{k}xf16>", f"tensor<{m}x{n}xf16>", f"!qf.weight<{n}x{k}, #enc>"
    return "\n".join([
        f"#enc = #qf.enc<{ENC}>",
        f"func.func @mlp(%x: {x} {{qf.name = \"x\"}}) -> {y} {{",
        f"  %g = qf.weight_ref \"gate_proj\" : {w}",
        f"  %u = qf.weight_ref \"up_proj\" : {w}",
        f"  %yg = qf.matmul %x, %g : {x}, {w} -> {y}",
        f"  %yu = qf.matmul %x, %u : {x}, {w} -> {y}",
        f"  %a = qf.silu_mul %yg, %yu : {y}",
        f"  return %a : {y}",
        "}", ""])


def main():
    out, shapes, batches = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    compiler = os.path.join(os.environ.get("QFUSE_BUILD_DIR", "build"), "bin", "qfuse-compile")
    os.makedirs(os.path.join(out, "artifacts"), exist_ok=True)
    runs = []
    for shape in shapes:
        n, k = (int(v) for v in shape.split("x"))
        for m in (int(b) for b in batches):
            arts = []
            for label, flags in VARIANTS:
                name = f"mlp{shape}-b{m}-{label}"
                src = os.path.join(out, name + ".mlir")
                art = os.path.join(out, "artifacts", name + ".qfa")
                with open(src, "w") as f:
                    f.write(model_ir(m, n, k))
                cmd = [compiler, src, "-o", art, "--chip=sm_90a"] + flags
                proc = subprocess.run(cmd, capture_output=True, text=True)
                os.remove(src)
                with open(os.path.join(out, "COMPILE"), "a") as f:
                    f.write(" ".join(cmd) + f"  # exit {proc.returncode}\n")
                if proc.returncode == 0:
                    arts.append(f"--artifact artifacts/{name}.qfa")
                else:
                    print(f"{name}: {proc.stderr.strip()}", file=sys.stderr)
            runs.append(f"mlp{shape}-b{m} " + " ".join(arts) +
                        f" --batch {m} --gemm {m}x{2 * n}x{k}")
    with open(os.path.join(out, "runs.txt"), "a") as f:
        f.write("\n".join(runs) + "\n")


if __name__ == "__main__":
    main()
