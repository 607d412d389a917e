#!/usr/bin/env python3
"""Counts an artifact's launches per plan (an artifact set: its first
variant), on each side of the act_order perm guards ("when", artifact
version 7): with every group's perms equal (the fused groups run) and with
every group's perms differing (their fallbacks run). Unguarded steps count
on both sides.

    count-launches.py <artifact.qfa>
"""
import json
import sys


def runs(step, equal):
    when = step.get("when")
    return not when or ("perms_equal" in when) == equal


def main():
    a = json.load(open(sys.argv[1]))
    if a.get("format") == "qfuse-artifact-set":
        a = a["variants"][0]
    guarded = any("when" in s for p in a["plans"] for s in p["steps"])
    for plan in a["plans"]:
        for equal in ((True, False) if guarded else (True,)):
            steps = [s for s in plan["steps"] if runs(s, equal)]
            side = ("perms equal" if equal else "perms differ") if guarded else "all"
            print(f"batch {plan['batch']} ({side}): {len(steps)} steps, "
                  f"{sum('launch' in s for s in steps)} launches, "
                  f"{sum('gemm' in s for s in steps)} cuBLAS gemms, "
                  f"{sum(s.get('op') == 'qf.permute_columns' for s in steps)} "
                  f"permute launches")


if __name__ == "__main__":
    main()
