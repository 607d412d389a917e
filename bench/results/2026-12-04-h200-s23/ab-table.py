#!/usr/bin/env python3
"""The gate/up + silu_mul A/B of call 2 (r2/mlp*.json) as a markdown table:
us per variant and cuBLAS fp16 / variant, training shapes then zoo shapes."""
import glob
import json
import os

TRAINING = ["14336x4096", "5632x2048", "20480x5120"]
here = os.path.dirname(os.path.abspath(__file__))
rows = {}
for path in glob.glob(os.path.join(here, "r2", "mlp*-b*.json")):
    d = json.load(open(path))
    shape, m = os.path.basename(path)[3:-5].split("-b")
    cublas = d["cublas"][0]["stats"]["median_ms"] * 1e3
    us = {p["artifact"].rsplit("-", 1)[1][:-4]: p["stats"]["median_ms"] * 1e3
          for p in d["artifact_plans"]}
    rows[(shape, int(m))] = (cublas, us)
print("| set | shape | M | cuBLAS | gated | grouped | separate | grouped vs gated |")
print("|---|---|---|---|---|---|---|---|")
for shape in TRAINING + sorted({s for s, _ in rows} - set(TRAINING)):
    for m in sorted(m for s, m in rows if s == shape):
        cublas, us = rows[(shape, m)]
        cells = " | ".join(f"{us[v]:.1f} ({cublas / us[v]:.2f})" for v in ("gated", "grouped", "separate"))
        kind = "training" if shape in TRAINING else "zoo (test)"
        print(f"| {kind} | {shape} | {m} | {cublas:.1f} | {cells} | {us['gated'] / us['grouped']:.2f}x |")
