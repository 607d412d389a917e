#!/usr/bin/env python3
"""Which default tilings a model change moves on the zoo's plan: every
(run, batch) of bench/zoo/plan.json listed by two compilers' --list-tilings
(the default, first line per batch), and the ones that differ printed with
both predictions, so that a GPU round can measure them.

    python3 bench/cost-model/tiling_changes.py OLD_COMPILER NEW_COMPILER \
        [--plan bench/zoo/plan.json] [--json OUT] [--chip sm_90a]

The fused q/k/v groups are not listed (--list-tilings takes one weight
type); gate/up groups are, with --list-gated.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo_error  # noqa: E402
from zoo_error import zoo, write_json  # noqa: E402


def defaults(compiler, entry, fmt, batches, chip):
    listed = zoo_error.list_tilings(compiler, entry, fmt, batches, chip)
    return {m: next((t, k, us) for t, k, us, d in rows if d)
            for m, rows in listed.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--plan", default=os.path.join(HERE, "..", "zoo",
                                                   "plan.json"))
    ap.add_argument("--json")
    ap.add_argument("--chip", help="qfuse-compile's --chip (its default if unset)")
    args = ap.parse_args()
    entries = {e["id"]: e for e in zoo.derive(zoo.load_models())[0]}
    changes, listed, skipped = [], 0, set()
    seen = set()
    for run in json.load(open(args.plan))["runs"]:
        entry, fmt = entries[run["entry"]], run["format"]
        name = f"{entry['id']}-{fmt}"
        if entry["kind"] == "qkv":
            skipped.add(name)
            continue
        if name in seen:
            continue
        seen.add(name)
        old = defaults(args.old, entry, fmt, zoo.BATCHES, args.chip)
        new = defaults(args.new, entry, fmt, zoo.BATCHES, args.chip)
        for m in zoo.BATCHES:
            listed += 1
            if old[m][0] != new[m][0]:
                changes.append({"run": name, "batch": m,
                                "old": old[m][0], "old_us": old[m][2],
                                "new": new[m][0], "new_us": new[m][2]})
    for c in changes:
        print(f"{c['run']:32s} M={c['batch']:<4d} {c['old']} -> {c['new']}")
    print(f"{len(changes)} of {listed} (run, batch) defaults change; "
          f"{len(skipped)} q/k/v group runs not listed")
    if args.json:
        write_json(args.json, changes, indent=1)


if __name__ == "__main__":
    main()
