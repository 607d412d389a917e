"""`tune`'s measurements on this machine: whether they can run here, and the
prepared qfuse-bench commands run in order within the budget (as run.sh runs
them elsewhere)."""
import json
import os
import subprocess
import time

from .tools import ToolError, find_tool
from .tune_prepare import DEFAULT_BUDGET_S, MANIFEST, RUNS


def gpu_problem():
    """Why the measurements cannot run here (no qfuse-bench, no device), or
    None. The device check is the one `quantize` uses."""
    try:
        find_tool("qfuse-bench")
    except ToolError as e:
        return str(e).split(";")[0]
    from .quantizer import gpu_problem as device_problem
    return device_problem()


def run_all(work, results, budget_s=DEFAULT_BUDGET_S, device=None, log=None):
    """Runs the manifest's qfuse-bench commands here, in order, within the
    budget; the same commands as run.sh. Returns (ran, failed, not run)."""
    log = log or (lambda text: None)
    with open(os.path.join(work, MANIFEST)) as f:
        manifest = json.load(f)
    bench = find_tool("qfuse-bench")
    os.makedirs(results, exist_ok=True)
    for name in (MANIFEST, RUNS):
        with open(os.path.join(work, name)) as src, \
                open(os.path.join(results, name), "w") as dst:
            dst.write(src.read())
    start = time.time()
    ran = failed = skipped = 0
    tsv = [("run", "exit", "seconds")]
    for i, r in enumerate(manifest["runs"]):
        left = budget_s - (time.time() - start) if budget_s else 86400
        need = r.get("estimated_s", 0) * 1.25 + 5
        if need > left:
            tsv.append((r["name"], f"not run (budget: {left:.0f} s left, {need:.0f} s "
                        "needed)", "-"))
            skipped += 1
            continue
        argv = [bench] + r["argv"] + (["--device", str(device)] if device is not None
                                      else []) + ["--json",
                                                  os.path.join(results, r["name"] + ".json")]
        t0 = time.time()
        with open(os.path.join(results, r["name"] + ".log"), "w") as out:
            try:
                rc = subprocess.run(argv, cwd=work, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=max(1, left - 2)).returncode
            except subprocess.TimeoutExpired:
                rc = 124
        tsv.append((r["name"], str(rc), str(round(time.time() - t0))))
        ran += 1
        failed += rc != 0
        log(f"[{i + 1}/{len(manifest['runs'])}] {r['name']}: "
            + ("ok" if rc == 0 else f"FAILED (exit {rc})"))
    with open(os.path.join(results, "runs.tsv"), "w") as f:
        for row in tsv:
            f.write("\t".join(row) + "\n")
    return ran, failed, skipped

