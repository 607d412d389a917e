#!/usr/bin/env python3
"""The mma.sync time model's prediction error on a zoo round (the test set:
no zoo shape is in the fit).

    python3 bench/cost-model/zoo_error.py RESULTS_DIR [--compiler BIN]
        [--write-tilings] [--json OUT]

RESULTS_DIR is a zoo round (bench/results/<date>-h200-zoo-*): zoo/<run>.json
holds the measured median of every plan the compiler chose. A prediction is
only meaningful for the tiling that was measured, so the round's mma.sync
tilings are kept in RESULTS_DIR/measured-tilings.json: --write-tilings
takes them from BIN's defaults (`--list-tilings`), which must be the
compiler of the round (its zoo/COMMIT, or one whose tiling choice is the
same). Every later model predicts those same tilings: BIN's `--list-tilings
--list-top=0` lists every candidate with its predicted time.

Prints the ratio predicted / measured per format and per family (median,
share of plans within 25%), and writes the per-plan rows with --json.
Launches the time model does not cover (matvec, dequant_gemm, the fused
q/k/v group) are left out.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "zoo"))
sys.path.insert(0, os.path.join(ROOT, "python-frontend"))
import zoo  # noqa: E402
from qfuse.atomic import write_json  # noqa: E402
from qfuse.encodings import encoding_text  # noqa: E402

# Decode families of the tensor-core kernel (DecodeFamily.h).
FAMILY = {"int4-g128": "int4 magic", "uint4-g128-asym": "int4 magic",
          "int4-pc": "int4 magic", "uint4-g32-asym": "int4 magic, group 32",
          "nf4": "table", "nvfp4": "table", "mxfp4": "table",
          "int8": "8-bit magic", "fp8": "e4m3 cvt"}
LINE = re.compile(r"^(#qf\.tiling<[^>]*>)\s*//\s*m = (\d+), (\w+)"
                  r"(?:, ([0-9.]+) us predicted)?(, default)?")


def weight_type(entry, fmt):
    enc = encoding_text(dict((f[0], f[1]) for f in zoo.FORMATS)[fmt])
    return f"!qf.weight<{entry['members'][0]['n']}x{entry['k']}, #qf.enc<{enc}>>"


def list_tilings(compiler, entry, fmt, batches, chip=None):
    """{m: [(tiling, kernel, predicted us or None, is default)]}."""
    cmd = [compiler, f"--list-tilings={weight_type(entry, fmt)}",
           "--batch-sizes=" + ",".join(map(str, batches)), "--list-top=0"]
    if chip:
        cmd.append(f"--chip={chip}")
    if entry["kind"] == "gate_up":
        cmd.append("--list-gated")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        hit = LINE.match(line)
        if hit:
            tiling, m, kernel, us, default = hit.groups()
            table.setdefault(int(m), []).append(
                (tiling, kernel, float(us) if us else None, bool(default)))
    return table


def measured(results):
    """[(run, entry, format, batch, measured us)] of the round."""
    entries = {e["id"]: e for e in zoo.derive(zoo.load_models())[0]}
    rows = []
    zdir = os.path.join(results, "zoo")
    for name in sorted(os.listdir(zdir)):
        if not name.endswith(".json"):
            continue
        run = name[:-5]
        base = re.sub(r"-b[0-9_]+$", "", run)
        fmt = max((f for f in zoo.FORMAT_NAMES if base.endswith("-" + f)),
                  key=len)
        entry = entries[base[: -len(fmt) - 1]]
        data = json.load(open(os.path.join(zdir, name)))
        for plan in data["artifact_plans"]:
            rows.append((base, entry, fmt, plan["batch"],
                         plan["stats"]["median_ms"] * 1e3))
    return rows


def write_tilings(results, compiler):
    """The mma.sync default of every (run, batch) of the round."""
    out, cache = {}, {}
    for run, entry, fmt, batch, _ in measured(results):
        if entry["kind"] == "qkv":
            continue
        if run not in cache:
            cache[run] = list_tilings(compiler, entry, fmt, zoo.BATCHES)
        for tiling, kernel, _, default in cache[run].get(batch, []):
            if default and kernel == "mma":
                out.setdefault(run, {})[str(batch)] = tiling
    path = os.path.join(results, "measured-tilings.json")
    write_json(path, out, indent=1)
    return out


def errors(results, compiler):
    tilings = json.load(open(os.path.join(results, "measured-tilings.json")))
    rows, cache = [], {}
    for run, entry, fmt, batch, us in measured(results):
        tiling = tilings.get(run, {}).get(str(batch))
        if not tiling:
            continue
        if run not in cache:
            cache[run] = list_tilings(compiler, entry, fmt, zoo.BATCHES)
        pred = [p for t, k, p, _ in cache[run].get(batch, []) if t == tiling]
        if not pred:
            raise SystemExit(f"{run} at {batch}: {tiling} is no longer a "
                             "candidate of this compiler")
        rows.append({"run": run, "format": fmt, "family": FAMILY[fmt],
                     "batch": batch, "tiling": tiling,
                     "predicted_us": pred[0], "measured_us": us})
    return rows


def report(rows):
    def line(name, group):
        ratios = [r["predicted_us"] / r["measured_us"] for r in group]
        within = sum(abs(math.log(x)) <= math.log(1.25) for x in ratios)
        logs = [abs(math.log(x)) for x in ratios]
        print(f"{name:22s} {len(group):4d} plans  median ratio "
              f"{statistics.median(ratios):.2f}  median |log err| "
              f"{statistics.median(logs):.2f}  within 25%: "
              f"{100 * within / len(group):3.0f}%")
    for key in ("format", "family"):
        for value in sorted({r[key] for r in rows}):
            line(value, [r for r in rows if r[key] == value])
        print()
    line("all", rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--compiler",
                    default=os.path.join(ROOT, "build", "bin", "qfuse-compile"))
    ap.add_argument("--write-tilings", action="store_true")
    ap.add_argument("--json", help="write the per-plan rows here")
    args = ap.parse_args()
    if args.write_tilings:
        write_tilings(args.results, args.compiler)
    rows = errors(args.results, args.compiler)
    report(rows)
    if args.json:
        write_json(args.json, rows, indent=1)


if __name__ == "__main__":
    main()
