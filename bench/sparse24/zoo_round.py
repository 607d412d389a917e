"""What bench/sparse24's zoo rounds share: the 2:4 test-set entries (zoo
single weights of 8M-40M elements, K a multiple of 128, drawn at random),
one default compile, and the folder bench/zoo/run-zoo.sh runs."""
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "zoo"))
import zoo  # noqa: E402


def pick_entries(count, seed):
    """`count` zoo single-weight entries of 8M-40M weights, K % 128 == 0."""
    singles = [e for e in zoo.derive(zoo.load_models())[0]
               if e["kind"] == "single" and 8e6 <= e["weights"] <= 40e6
               and e["k"] % 128 == 0]
    return random.Random(seed).sample(singles, count)


def compile_one(tool, ir, path, chip):
    """`tool` compiles `ir` the default way (no --tuning-db) to `path`."""
    r = subprocess.run([tool, "-", "-o", path, f"--chip={chip}"], input=ir,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{tool} failed on {path}: {r.stderr.strip()[-400:]}")


def start_round(out):
    """A fresh `out` and its artifacts folder."""
    shutil.rmtree(out, ignore_errors=True)
    arts = os.path.join(out, "artifacts")
    os.makedirs(arts)
    return arts


def repo_relative(path):
    return os.path.relpath(path, os.path.join(HERE, "..", ".."))


def finish_round(out, lines, seed):
    """runs.txt in a fixed random order (a round cut short by its budget
    leaves out a sample, not the last entries), COMPILE, and the artifacts
    packed as artifacts.txz."""
    random.Random(seed).shuffle(lines)
    with open(os.path.join(out, "runs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "COMPILE"), "w") as f:
        f.write(" ".join(sys.argv) + "\n")
    arts = os.path.join(out, "artifacts")
    with tarfile.open(os.path.join(out, "artifacts.txz"), "w:xz") as t:
        t.add(arts, arcname="artifacts")
    shutil.rmtree(arts)


def read_round(folder):
    """Each run JSON of a round run by bench/zoo/run-zoo.sh under `folder`:
    (run name, {M: cuBLAS fp16 us}, {(side, M): us} where side is the letter
    an artifact's name ends in, `-a.qfa` -> 'a', and the run's checks)."""
    runs = []
    for path in sorted(glob.glob(os.path.join(folder, "**", "*.json"), recursive=True)):
        d = json.load(open(path))
        if "artifact_plans" not in d:
            continue
        cublas = {c["m"]: c["stats"]["median_ms"] * 1e3 for c in d.get("cublas", [])}
        us = {}
        for plan in d["artifact_plans"]:
            art = plan.get("artifact") or plan.get("path") or ""
            side = art[-5] if art[-6:-5] == "-" and art.endswith(".qfa") else "?"
            us[(side, plan["batch"])] = plan["stats"]["median_ms"] * 1e3
        runs.append((os.path.basename(path)[:-5], cublas, us, d.get("checks")))
    return runs
