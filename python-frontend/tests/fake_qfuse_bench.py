#!/usr/bin/env python3
"""A stand-in for qfuse-bench in the tune tests (no GPU here): takes the
arguments run.sh and `tune` pass (--artifact A --batch M --gemm MxNxK --check
--json FILE) and writes JSON in qfuse-bench's format.

What each artifact measures comes from $FAKE_BENCH_TIMES, a JSON file
{artifact base name: microseconds | "fail" (a check fails) | "crash" (exit
without JSON)}; other artifacts take 100 us. cuBLAS takes 50 us.
"""
import argparse
import json
import os
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--artifact", action="append", default=[])
    p.add_argument("--batch")
    p.add_argument("--gemm", action="append", default=[])
    p.add_argument("--check", action="store_true")
    p.add_argument("--json")
    p.add_argument("--device")
    args = p.parse_args()
    table = {}
    if os.environ.get("FAKE_BENCH_TIMES"):
        with open(os.environ["FAKE_BENCH_TIMES"]) as f:
            table = json.load(f)
    batch = int(args.batch)
    out = {"command": " ".join(sys.argv), "gpu": "fake", "chip": "sm_90",
           "cublas": [], "artifact_plans": [], "checks": []}
    for g in args.gemm:
        m, n, k = map(int, g.split("x"))
        out["cublas"].append({"label": g, "m": m, "stats": {"median_ms": 0.05}})
    code = 0
    for path in args.artifact:
        with open(path) as f:
            artifact = json.load(f)  # a real artifact: must parse
        name = os.path.basename(path)[:-len(".qfa")]
        what = table.get(name, 100.0)
        if what == "crash":
            print("CUDA error: an illegal memory access was encountered")
            return 134
        weights = artifact.get("weights", [])
        w = dict(weights[0]) if weights else {"name": name, "shape": [0, 0]}
        w["n"], w["k"] = w.get("shape", [0, 0])
        passed = what != "fail"
        code |= 0 if passed else 1
        if args.check:
            out["checks"].append({"kernel": "qf_kernel", "weight": w.get("name"),
                                  "m": batch, "n": w.get("n"), "k": w.get("k"),
                                  "relative_error": 3e-4 if passed else 0.5,
                                  "tolerance": 1e-2, "unwritten": False,
                                  "passed": passed})
        us = 100.0 if what == "fail" else float(what)
        out["artifact_plans"].append({
            "artifact": path, "batch": batch,
            "weight_shapes": [{"weight": w.get("name"), "n": w.get("n"), "k": w.get("k"),
                               "encoding": w.get("encoding")}],
            "stats": {"median_ms": us / 1e3}})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    print("fake qfuse-bench: " + ("ok" if code == 0 else "some checks FAILED"))
    return code


if __name__ == "__main__":
    sys.exit(main())
