#!/usr/bin/env python3
"""Compare the per-module GPTQ losses of two qfuse-quantize --json reports.

    scripts/gptq-compare-losses.py A.json B.json

Prints how many of the modules' losses are identical (to the last bit of
the double the report holds), the largest relative difference, and the
ratio of B's losses to A's (in all, and per module: median and range). The same
model, calibration and seed give identical losses exactly when every code
and error of the solve is the same, so this is the cheap check that a
change to the pipeline left the codes alone (the byte comparison of the
written checkpoints is the direct one).
"""
import json
import sys


def losses(path):
    doc = json.load(open(path))
    out = {}
    for layer in doc["layers"]:
        for group in layer["groups"]:
            for module in group["modules"]:
                out[module["name"]] = module["loss"]
    return out


def main():
    a, b = losses(sys.argv[1]), losses(sys.argv[2])
    if a.keys() != b.keys():
        print(f"different modules: {len(a)} against {len(b)}")
        return 1
    same = sum(1 for k in a if a[k] == b[k])
    worst = max(abs(a[k] - b[k]) / max(abs(a[k]), 1e-30) for k in a)
    ratios = sorted(b[k] / a[k] for k in a if a[k] > 0)
    print(f"{same}/{len(a)} module losses identical, largest relative "
          f"difference {worst:.3g}; total loss B/A {sum(b.values()) / sum(a.values()):.6f}, "
          f"per-module B/A median {ratios[len(ratios) // 2]:.6f} "
          f"[{ratios[0]:.6f}, {ratios[-1]:.6f}]")
    return 0 if same == len(a) else 2


if __name__ == "__main__":
    sys.exit(main())
