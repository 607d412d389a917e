#!/usr/bin/env python3
"""One line per (shape, batch) of a make-sweep.py round: cuBLAS fp16, the
default a user gets and the fastest tiling measured (us and speedup), the
next six, and the fastest of each kernel (mma.sync M..., wgmma W...).

  python3 bench/pipeline-depth/summarize.py <folder of the round's JSON>

The round's records may be kept as .json.xz (qfuse.records).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python-frontend"))
from qfuse.records import read_json, record_paths  # noqa: E402


def batch_of(path):
    return int(re.search(r"-b(\d+)\.json(\.xz)?$", path).group(1))


for f in sorted(record_paths(sys.argv[1], "*"),
                key=lambda f: (batch_of(f), f)):
    d = read_json(f)
    cublas = d["cublas"][0]["stats"]["median_ms"] * 1000
    rows = sorted((round(p["stats"]["median_ms"] * 1000, 2),
                   os.path.basename(p["artifact"])[:-4].split("-")[-1])
                  for p in d["artifact_plans"])
    default = next(r for r in rows if r[1] == "default")
    name = os.path.basename(f).split(".json")[0]
    print(f"{name:16s} cuBLAS {cublas:6.2f}  default {default[0]:6.2f} "
          f"({cublas / default[0]:.2f}x)  best {rows[0][0]:6.2f} {rows[0][1]} "
          f"({cublas / rows[0][0]:.2f}x)")
    print("     ", rows[1:7])
    best_mma = [r for r in rows if r[1].startswith("M")][:1]
    best_wgmma = [r for r in rows if r[1].startswith("W")][:1]
    print("      best mma", best_mma, "best wgmma", best_wgmma)
