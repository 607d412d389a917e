#!/usr/bin/env python3
"""compute-sanitizer over one small plan of every kernel family (issue 22 part 4).

Runs on the GPU machine (scripts/gpu-round.sh, ONLY=sanitize) over the
artifacts bench/make-gpu-checks.sh compiled into DIR (default
.devcarry/gpu-checks/sanitize): every run below under memcheck, racecheck,
synccheck and initcheck, each in its own process with a time limit, a few at
a time. Writes OUT/sanitize.json and one log per run and tool, prints a table
(kernel family x tool: error counts) and exits 1 when any run has an error,
a failed program or a time-out.

    bench/sanitize/run-sanitize.py [--dir DIR] [--bin build-gpu/bin] [--out OUT]
                                   [--tools memcheck,racecheck] [--only matvec,...]
                                   [--jobs 4] [--budget 300] [--dry-run]

--dry-run checks that the artifacts and tools exist and prints the commands
(no GPU needed). No run starts after --budget seconds (it is recorded as not
run, a failure), so the whole part ends within the budget plus one time
limit. Counting: memcheck, synccheck and initcheck count the
"ERROR SUMMARY"; racecheck counts its hazards of severity error (warnings
are recorded apart and do not fail the run).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
# Seconds a tool may take on one run (racecheck instruments every shared
# memory access: the slowest by far).
# On these tiny plans each takes seconds; a time-out means something hangs.
TIMEOUT = {"memcheck": 90, "racecheck": 150, "synccheck": 90, "initcheck": 90}
PROMPT = ",".join(str(i) for i in range(1, 13))  # 12 tokens: one padded chunk of 16


def runs(d):
    """(name, kernel families covered, argv with {bin} for the tools' folder)."""
    bench = ["{bin}/qfuse-bench", "--check-only", "--seed", "7", "--artifact"]
    model = ["{bin}/qfuse-run", "--random-weights", "7", "--prompt-ids", PROMPT,
             "--max-new-tokens", "3", "--warmup", "0", "--artifact"]
    return [
        ("matvec", "matvec int4-g128 at M = 1 and 3",
         bench + [f"{d}/matvec.qfa"]),
        ("mma.sync", "tensor-core mma.sync int4-g128 at M = 16",
         bench + [f"{d}/mma.qfa"]),
        ("wgmma", "tensor-core wgmma (sm_90a) int4-g128 at M = 128",
         bench + [f"{d}/wgmma.qfa"]),
        ("permute", "act_order: permute + mma.sync at M = 16, matvec at M = 1",
         bench + [f"{d}/act-order.qfa"]),
        ("fallback", "dequantize + cuBLAS at M = 16",
         bench + [f"{d}/fallback.qfa"]),
        ("gptq-block", "GPTQ block update, dynamic and static grids",
         ["{bin}/qfuse-gptq-check", "--artifact", f"{d}/gptq-blocks.qfa"]),
        ("decode-ops", "tiny Llama, --fuse=none: embedding, rms_norm, rotary "
         "(llama3), kv-cache write, attention, add, silu_mul, argmax, matvec, "
         "mma.sync; prefill chunk of 16 + 2 decode steps (graphs)",
         model + [f"{d}/model-unfused.qfa"]),
        ("decode-fused+sample", "tiny Llama, default fusions, --sampling: "
         "rotary-attention, norm prologue, gated MLP and epilogues, sample "
         "(temperature 0.8, top-p 0.9)",
         model + [f"{d}/model-sampling.qfa", "--temperature", "0.8", "--top-p",
                  "0.9", "--seed", "1"]),
    ]


def find_sanitizer():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"):
        if not root:
            continue
        for sub in ("bin/compute-sanitizer", "compute-sanitizer/compute-sanitizer"):
            path = os.path.join(root, sub)
            if os.access(path, os.X_OK):
                return path
    return None


def sanitizer_argv(sanitizer, tool):
    argv = [sanitizer, "--tool", tool, "--print-limit", "20",
            "--error-exitcode", "97"]
    if tool == "memcheck":
        argv += ["--leak-check", "no"]
    return argv


_ERRORS = re.compile(r"ERROR SUMMARY:\s+(\d+)\s+error")
_RACES = re.compile(r"RACECHECK SUMMARY:\s+(\d+)\s+hazards?\s+displayed\s+"
                    r"\((\d+)\s+errors?,\s+(\d+)\s+warnings?\)")
# Kernel names in the reports: ours (qf_*) and cuBLAS's.
_KERNEL = re.compile(r"\b(qf_\w+|\w*(?:gemm|cutlass|xmma)\w*)")


def parse(log, tool):
    """(errors, warnings, kernels named in the reports) from a sanitizer log;
    errors is None when no summary line was printed."""
    errors = warnings = None
    races = _RACES.findall(log)
    if races:
        errors = sum(int(e) for _, e, _ in races)
        warnings = sum(int(w) for _, _, w in races)
    summary = _ERRORS.findall(log)
    if summary:
        # racecheck may print both lines; the ERROR SUMMARY counts errors.
        errors = max(errors or 0, max(int(n) for n in summary))
    kernels = set()
    for line in log.splitlines():
        if line.startswith("========="):
            kernels.update(_KERNEL.findall(line))
    return errors, warnings, sorted(kernels)


def run_one(name, argv, tool, sanitizer, out, deadline):
    log_path = os.path.join(out, f"{name}.{tool}.log")
    cmd = sanitizer_argv(sanitizer, tool) + argv
    start = time.monotonic()
    if start > deadline:
        return {"run": name, "tool": tool, "status": "not run (budget)",
                "exit_code": None, "errors": None, "warnings": None,
                "kernels_reported": [], "seconds": 0, "log": None, "command": cmd}
    status, rc = "ok", None
    # Its own process group: a time-out ends the sanitizer and the program
    # under it, not the sanitizer alone.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True)
    try:
        text, _ = p.communicate(timeout=TIMEOUT[tool])
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        text, _ = p.communicate()
        status = "timeout"
    seconds = time.monotonic() - start
    with open(log_path, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + text)
    errors, warnings, kernels = parse(text, tool)
    if status == "ok":
        if errors is None:
            status = "no summary"
        elif errors > 0:
            status = "errors"
        elif rc not in (0, None):
            status = f"exit {rc}"
    return {"run": name, "tool": tool, "status": status, "exit_code": rc,
            "errors": errors, "warnings": warnings, "kernels_reported": kernels,
            "seconds": round(seconds, 1), "log": os.path.basename(log_path),
            "command": cmd}


def table(results, names, tools):
    by = {(r["run"], r["tool"]): r for r in results}
    width = max(len(n) for n in names) + 2
    lines = ["sanitizer errors per kernel family (0 = clean; T = time-out, "
             "X = program failed, ? = no summary, skip = past the budget)",
             "family".ljust(width) + "".join(t.rjust(11) for t in tools)]
    for n in names:
        cells = []
        for t in tools:
            r = by.get((n, t))
            if r is None:
                cell = "-"
            elif r["status"] == "timeout":
                cell = "T"
            elif r["status"].startswith("not run"):
                cell = "skip"
            elif r["errors"] is None:
                cell = "?"
            else:
                cell = str(r["errors"])
                if r["status"].startswith("exit"):
                    cell += " X"
                if r.get("warnings"):
                    cell += f" ({r['warnings']}w)"
            cells.append(cell.rjust(11))
        lines.append(n.ljust(width) + "".join(cells))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=".devcarry/gpu-checks/sanitize")
    p.add_argument("--bin", default="build-gpu/bin")
    p.add_argument("--out", default="gpu-out/results/sanitize")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--only", help="comma-separated run names")
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--budget", type=float, default=300,
                   help="seconds after which no run starts")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args()

    tools = [t for t in args.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            sys.exit(f"run-sanitize: unknown tool {t!r} ({', '.join(TOOLS)})")
    selected = runs(args.dir)
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {n for n, _, _ in selected}
        if unknown:
            sys.exit(f"run-sanitize: unknown run {sorted(unknown)[0]!r}")
        selected = [r for r in selected if r[0] in wanted]
    missing = []
    for _, _, argv in selected:
        for a in argv:
            path = a.replace("{bin}", args.bin)
            if (a.startswith("{bin}") or a.endswith(".qfa")) and not os.path.exists(path):
                missing.append(path)
    sanitizer = find_sanitizer()
    if args.dry_run:
        for name, what, argv in selected:
            for t in tools:
                cmd = sanitizer_argv(sanitizer or "compute-sanitizer", t) + \
                    [a.replace("{bin}", args.bin) for a in argv]
                print(f"[{name} / {t}, limit {TIMEOUT[t]} s] " + " ".join(cmd))
        if missing:
            print("missing: " + ", ".join(sorted(set(missing))))
        print(f"run-sanitize: dry run, {len(selected) * len(tools)} sanitizer runs"
              + ("" if sanitizer else " (compute-sanitizer not found here)"))
        return 1 if missing else 0
    if missing:
        sys.exit("run-sanitize: missing " + ", ".join(sorted(set(missing)))
                 + " (bench/make-gpu-checks.sh compiles the artifacts)")
    if not sanitizer:
        sys.exit("run-sanitize: compute-sanitizer not found (PATH, $CUDA_HOME, "
                 "/usr/local/cuda)")
    os.makedirs(args.out, exist_ok=True)
    version = subprocess.run([sanitizer, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout.strip()
    start = time.monotonic()
    deadline = start + args.budget
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        # Racecheck first: it takes longest.
        order = sorted(tools, key=lambda t: t != "racecheck")
        for t in order:
            for name, _, argv in selected:
                cmd = [a.replace("{bin}", args.bin) for a in argv]
                jobs.append(pool.submit(run_one, name, cmd, t, sanitizer, args.out,
                                        deadline))
        results = []
        for job in concurrent.futures.as_completed(jobs):
            r = job.result()
            results.append(r)
            print(f"  {r['run']:<22} {r['tool']:<10} {r['status']:<10} "
                  f"errors {r['errors']}  {r['seconds']:.0f} s", flush=True)
    names = [n for n, _, _ in selected]
    results.sort(key=lambda r: (names.index(r["run"]), tools.index(r["tool"])))
    failed = [r for r in results if r["status"] != "ok"]
    report = {
        "sanitizer": sanitizer, "version": version, "tools": tools,
        "timeouts_s": {t: TIMEOUT[t] for t in tools},
        "runs": [{"run": n, "covers": what,
                  "command": [a.replace("{bin}", args.bin) for a in argv]}
                 for n, what, argv in selected],
        "results": results, "wall_s": round(time.monotonic() - start, 1),
        "pass": not failed,
    }
    with open(os.path.join(args.out, "sanitize.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(table(results, names, tools))
    print(f"run-sanitize: {len(results)} sanitizer runs in {report['wall_s']:.0f} s, "
          f"{len(failed)} not clean: {'FAIL' if failed else 'PASS'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
