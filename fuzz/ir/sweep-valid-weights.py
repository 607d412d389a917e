#!/usr/bin/env python3
"""Nothing valid is refused (issue 20, part 4), sampled: compiles one
dynamic-batch matmul per sample through qfuse-compile (ptxas included) and
fails if any sample does not compile.

A sample is a packed weight type of the dialect's round-trip tests (the
encodings of test/Tools/qfuse-compile/Inputs/every-encoding.mlir), a random
N, a random K the type verifier accepts for it (a multiple of its group and
of 4 under 2:4, whole bytes a row), three batch sizes from 1 to 4096 and a
chip (sm_80, sm_90, sm_90a). Deterministic per seed; the lit sweep
(every-encoding.mlir) keeps fixed shapes and batches, this one goes
between them.

  fuzz/ir/sweep-valid-weights.py --qfuse-compile build/bin/qfuse-compile \
      [--seed S] [--count N] [--work DIR]

Prints one line per sample that failed (its command and first error) and a
summary; exits 1 if any failed.
"""
import argparse
import pathlib
import random
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENCODINGS = ROOT / "test/Tools/qfuse-compile/Inputs/every-encoding.mlir"
ENCODING = re.compile(r"!qf\.weight<\d+x\d+, (#qf\.enc<(?:[^<>]|<[^<>]*>)*>)>")
ROWS = [1, 3, 7, 64, 96, 100, 256, 1000, 1024, 2048, 3584, 4096, 5000,
        11008, 14336]
BATCHES = [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64,
           65, 96, 100, 127, 128, 129, 200, 255, 256, 257, 384, 511, 512, 513,
           1000, 2048, 4095, 4096]
CHIPS = ["sm_80", "sm_90", "sm_90a"]


def code_bits(encoding):
    """Bits of one stored code, as format::codeBits counts them."""
    bits = re.search(r"bits = (\d+)", encoding)
    if bits:
        return int(bits.group(1))
    kind = re.match(r"#qf\.enc<(\w+)", encoding).group(1)
    return {"int4": 4, "uint4": 4, "nf4": 4, "fp4e2m1": 4, "int8": 8,
            "uint8": 8, "fp8e4m3": 8, "f16": 16, "bf16": 16}[kind]


def valid_k(encoding, rng):
    """A K the type verifier accepts for `encoding` (Encoding.cpp)."""
    group = re.search(r"group = (\d+)", encoding)
    group = int(group.group(1)) if group else 1
    sparse = "sparse = 2:4" in encoding
    bits = code_bits(encoding)
    while True:
        k = group * rng.randint(1, max(1, 8192 // group))
        stored = k // 2 if sparse else k
        if (not sparse or k % 4 == 0) and stored * bits % 8 == 0:
            return k


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qfuse-compile", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--work", help="folder for the samples (default: a "
                        "temporary one); failing samples are kept there")
    args = parser.parse_args()
    encodings = sorted(set(ENCODING.findall(ENCODINGS.read_text())))
    if not encodings:
        sys.exit(f"sweep-valid-weights: no weight types in {ENCODINGS}")
    rng = random.Random(args.seed)
    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="qfuse-sweep-"))
    work.mkdir(parents=True, exist_ok=True)
    failed = 0
    for i in range(args.count):
        enc = rng.choice(encodings)
        n, k = rng.choice(ROWS), valid_k(enc, rng)
        chip = rng.choice(CHIPS)
        batches = sorted({rng.choice(BATCHES) for _ in range(3)})
        weight = f"!qf.weight<{n}x{k}, {enc}>"
        source = work / f"sample{i}.mlir"
        source.write_text(
            f"func.func @w(%x: tensor<?x{k}xf16>) -> tensor<?x{n}xf16> {{\n"
            f"  %w = qf.weight_ref \"w\" : {weight}\n"
            f"  %y = qf.matmul %x, %w : tensor<?x{k}xf16>, {weight} -> "
            f"tensor<?x{n}xf16>\n"
            f"  return %y : tensor<?x{n}xf16>\n}}\n")
        output = work / f"sample{i}.qfa"
        cmd = [args.qfuse_compile, str(source), f"--chip={chip}",
               "--batch-sizes=" + ",".join(map(str, batches)),
               "-o", str(output)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode == 0:
            source.unlink()
            output.unlink(missing_ok=True)
            continue
        failed += 1
        errors = [l for l in run.stderr.splitlines() if "error" in l]
        print("FAILED:", " ".join(cmd), "|", (errors or ["(no error line)"])[0])
    print(f"sweep-valid-weights: seed {args.seed}, {args.count} samples, "
          f"{failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
