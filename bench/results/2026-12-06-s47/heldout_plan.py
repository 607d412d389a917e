#!/usr/bin/env python3
"""A zoo plan of the entries bench/zoo/plan.json leaves out (its
`left_out`, up to the plan's max_weights, no q/k/v groups): a test set no
A/B has used, for `tiling_changes.py --plan` and `make-zoo-ab.py`. Every
valid format, every batch, in the plan's run format.

    python3 bench/results/2026-12-06-s47/heldout_plan.py OUT.json
"""
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "zoo"))
import zoo  # noqa: E402

plan = json.load(open(os.path.join(ROOT, "bench", "zoo", "plan.json")))
left = {e["id"] for e in plan["left_out"]}
runs = []
for e in zoo.derive(zoo.load_models())[0]:
    if e["id"] not in left or e["kind"] == "qkv" or e["weights"] > plan["max_weights"]:
        continue
    for fmt, why in zoo.format_validity(e).items():
        if not why:
            runs.append({"entry": e["id"], "format": fmt, "size": e["size"],
                         "wave": "held out", "batches": zoo.BATCHES,
                         "est_s": round(zoo.run_cost(e, zoo.BATCHES), 2)})
json.dump({"runs": runs}, open(sys.argv[1], "w"), indent=1)
print(f"{len(runs)} runs of {len({r['entry'] for r in runs})} held-out entries")
