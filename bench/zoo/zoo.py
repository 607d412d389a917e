#!/usr/bin/env python3
"""The zoo (issue 18, part 1): linear-layer shapes of public models that
nothing in qfuse is tuned on, as qf IR, and the sampled list of GPU runs.

    python3 bench/zoo/zoo.py shapes            # bench/zoo/shapes.json + a table
    python3 bench/zoo/zoo.py plan [--budget S] # bench/zoo/plan.json (sampled runs)
    python3 bench/zoo/zoo.py emit ENTRY FORMAT # the qf IR of one entry, stdout

Entries are launches: a single projection (q, k, v, o, gate, up, down,
lm_head; de-duplicated by N x K across models and kinds), the q/k/v group
(three matmuls sharing x: qf-fuse-shared-input makes one launch) and the
gate/up group (two matmuls sharing x and qf.silu_mul: qf-fuse-gated-mlp
makes one launch with the silu_mul epilogue). Each entry lists the models
and projections that use it. The cuBLAS fp16 baseline of a group is one
GEMM of the concatenated weight (N = sum of the members' N), as fp16
servers run it (vLLM's QKVParallelLinear / MergedColumnParallelLinear),
without the SiLU*mul that qfuse fuses in.

Shapes whose launch key (N, K) is in bench/tuning-db.json are left out
(listed under "excluded" with the reason); encodings whose group does not
divide K are recorded as skipped, with the reason, never silently.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python-frontend"))
from qfuse.atomic import write_json  # noqa: E402
from qfuse.encodings import encoding_text  # noqa: E402

# name -> (encoding name understood by qfuse.encodings, group or None)
FORMATS = [
    ("int4-g128", "int4-g128", 128),
    ("uint4-g128-asym", "uint4-g128-asym", 128),
    ("uint4-g32-asym", "uint4-g32-asym", 32),
    ("int4-pc", "int4-pc", None),
    ("nf4", "nf4", 64),
    ("nvfp4", "nvfp4", 16),
    ("mxfp4", "mxfp4", 32),
    ("int8", "int8", None),
    ("fp8", "fp8", None),
]
FORMAT_NAMES = [f[0] for f in FORMATS]
BATCHES = [1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512]
LARGE = 8_000_000  # weights per launch from which a shape counts as large


def load_models(path=os.path.join(HERE, "models.json")):
    with open(path) as f:
        return json.load(f)["models"]


def tuned_keys(path=os.path.join(ROOT, "bench", "tuning-db.json")):
    with open(path) as f:
        return {(e["n"], e["k"]) for e in json.load(f)}


def model_projections(m):
    """[(kind, N, K)] of one model's decoder layer and lm_head."""
    h, q, kv = m["hidden"], m["heads"] * m["head_dim"], m["kv_heads"] * m["head_dim"]
    inter = m["intermediate"]
    projs = [("q_proj", q, h), ("k_proj", kv, h), ("v_proj", kv, h), ("o_proj", h, q)]
    if m["mlp"] == "gated":
        projs += [("gate_proj", inter, h), ("up_proj", inter, h)]
    else:
        projs += [("up_proj", inter, h)]
    projs += [("down_proj", h, inter), ("lm_head", m["vocab"], h)]
    return projs


def entry_id(kind, members):
    k = members[0][2]
    if kind == "single":
        return f"s{members[0][1]}x{k}"
    if kind == "qkv":
        return f"qkv{members[0][1]}+{members[1][1]}x2x{k}"
    return f"gu2x{members[0][1]}x{k}"


def derive(models):
    """(entries, excluded): every launch shape, de-duplicated, with users."""
    tuned = tuned_keys()
    entries = {}

    def add(kind, members, user):
        eid = entry_id(kind, members)
        e = entries.setdefault(eid, {
            "id": eid, "kind": kind,
            "members": [{"proj": p, "n": n, "k": k} for p, n, k in members],
            "n_total": sum(n for _, n, _ in members), "k": members[0][2],
            "weights": sum(n * k for _, n, k in members), "used_by": []})
        if user not in e["used_by"]:
            e["used_by"].append(user)

    for m in models:
        projs = model_projections(m)
        by = {p: (n, k) for p, n, k in projs}
        for p, n, k in projs:
            add("single", [(p, n, k)], f"{m['name']}:{p}")
        add("qkv", [(p, *by[p]) for p in ("q_proj", "k_proj", "v_proj")],
            f"{m['name']}:qkv")
        if m["mlp"] == "gated":
            add("gate_up", [(p, *by[p]) for p in ("gate_proj", "up_proj")],
                f"{m['name']}:gate_up")
    kept, excluded = [], []
    for e in entries.values():
        # A single's members share its proj name; name it by its first user.
        if e["kind"] == "single":
            e["members"][0]["proj"] = "w"
        key = (e["n_total"], e["k"])
        if key in tuned:
            excluded.append({"id": e["id"], "used_by": e["used_by"],
                             "reason": f"N x K = {key[0]} x {key[1]} is in "
                                       "bench/tuning-db.json"})
            continue
        e["size"] = "large" if e["weights"] >= LARGE else "small"
        kept.append(e)
    kept.sort(key=lambda e: (e["weights"], e["id"]))
    return kept, excluded


def format_validity(entry):
    """{format: None (valid) or the reason it is skipped}."""
    out = {}
    for name, _, group in FORMATS:
        if group and entry["k"] % group:
            out[name] = f"group {group} does not divide K = {entry['k']}"
        else:
            out[name] = None
    return out


def emit(entry, fmt):
    """The qf IR of one entry in one format (dynamic batch)."""
    enc = encoding_text(dict((f[0], f[1]) for f in FORMATS)[fmt])
    k = entry["k"]
    x = f"tensor<?x{k}xf16>"
    lines = [f"// bench/zoo entry {entry['id']} ({entry['kind']}), {fmt}; used by "
             + ", ".join(entry["used_by"]),
             f"#enc = #qf.enc<{enc}>"]
    mem = entry["members"]
    wt = [f"!qf.weight<{m['n']}x{k}, #enc>" for m in mem]
    yt = [f"tensor<?x{m['n']}xf16>" for m in mem]
    if entry["kind"] == "gate_up":
        ret = [yt[0]]
    else:
        ret = yt
    lines.append(f"func.func @zoo(%x: {x}) -> ({', '.join(ret)}) {{")
    for i, m in enumerate(mem):
        lines.append(f"  %w{i} = qf.weight_ref \"{m['proj']}\" : {wt[i]}")
    for i, m in enumerate(mem):
        lines.append(f"  %y{i} = qf.matmul %x, %w{i} : {x}, {wt[i]} -> {yt[i]}")
    if entry["kind"] == "gate_up":
        lines.append(f"  %a = qf.silu_mul %y0, %y1 : {yt[0]}")
        lines.append(f"  return %a : {yt[0]}")
    else:
        outs = ", ".join(f"%y{i}" for i in range(len(mem)))
        lines.append(f"  return {outs} : {', '.join(yt)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- sampling
# Seconds per qfuse-bench process. Its host side dominates: random weights
# drawn, then RTN-quantized on one core per weight; per checked batch every
# weight dequantized again on one core, and the reference matmul (double
# accumulation) on all cores; the timings themselves are short. Measured on
# this machine's cores for the formats (tests of format::quantizeRTN /
# dequantize: 15-45 / 25-80 M weights/s) and fitted to the smoke run on
# the GPU machine (6 runs, stamped logs: quantize 9-17 M weights/s, checks
# 0.23 s + 0.6 ms x M at 8.4M weights, 0.5 s + 2.8 ms x M at 21M; the
# estimates came within 10% except the nvfp4 gate/up group, +33%).
COST = {
    "process_s": 1.3,                  # process, CUDA start, copy, timings
    "quantize_weights_per_s": 12e6,    # per weight, one core each
    "dequantize_weights_per_s": 36e6,  # per weight per checked batch
    "reference_macs_per_s": 8e9,       # all cores
    "per_batch_s": 0.02,               # plan + cuBLAS timings
}


def compile_all(commands, workers):
    """Runs the qfuse-compile `commands` (argument lists) `workers` at a
    time; exits naming each one that failed, with its stderr's end."""
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda cmd: subprocess.run(
            cmd, capture_output=True, text=True), commands))
    failed = [" ".join(c) + "\n" + r.stderr[-400:]
              for c, r in zip(commands, results) if r.returncode]
    if failed:
        sys.exit("compile failed:\n" + "\n".join(failed))


def run_cost(entry, batches, cost=COST):
    w_max = max(m["n"] * m["k"] for m in entry["members"])
    w = entry["weights"]
    s = cost["process_s"] + w_max / cost["quantize_weights_per_s"]
    for b in batches:
        s += w / cost["dequantize_weights_per_s"]
        s += b * w / cost["reference_macs_per_s"]
        s += cost["per_batch_s"]
    return s


def spread_order(items):
    """A deterministic order over a size-sorted list in which every prefix
    spreads over the range: median, ends, quartiles, eighths, ..."""
    n = len(items)
    order, seen = [], set()

    def take(i):
        if i not in seen:
            seen.add(i)
            order.append(items[i])

    if n == 0:
        return order
    take(n // 2)
    take(0)
    take(n - 1)
    parts = 2
    while len(order) < n:
        for j in range(1, 2 * parts, 2):
            take(round(j * (n - 1) / (2 * parts)))
        parts *= 2
        if parts > 4 * n:
            for i in range(n):
                take(i)
    return order


SPOT_BATCHES = [1, 16, 128]
SPOT_FORMATS = ["int4-g128", "nf4"]


def plan(entries, budget_s, max_weights, waves, spot_budget_s, cost=COST):
    """The sampled run list, in the order it runs.

    Waves first, as many as fit `budget_s` (at most `waves`): wave w measures, for every format, the w-th shape of each
    stratum -- small (< 8M weights per launch) and large (8M up to
    `max_weights`) -- at all 16 batches (one process per shape and format),
    so that stopping anywhere leaves every (format, batch) cell covered by
    both strata, with the same shapes in every format. Each stratum's
    shapes are taken in spread order over their sizes (median, smallest,
    largest, quartiles, ...). Then spot checks of the shapes past
    `max_weights` (the 70B projections, the lm_heads: their host-side
    quantization and checks cost too much for every batch and format), in
    spread order, at SPOT_BATCHES in SPOT_FORMATS, within `spot_budget_s`;
    last, the next wave, which runs where the round has time left.
    Returns (runs, left_out)."""
    strata, big = {}, []
    for e in entries:
        if e["weights"] > max_weights:
            big.append(e)
        else:
            strata.setdefault(e["size"], []).append(e)
    orders = {s: spread_order(v) for s, v in sorted(strata.items())}
    runs, total, overflow = [], 0.0, []
    for wave in range(max(len(o) for o in orders.values())):
        batch_runs = []
        for s in ("small", "large"):
            o = orders.get(s, [])
            if wave >= len(o):
                continue
            e = o[wave]
            for fmt, why in format_validity(e).items():
                if not why:
                    batch_runs.append({"entry": e["id"], "format": fmt, "size": s,
                                       "wave": wave, "batches": BATCHES,
                                       "est_s": round(run_cost(e, BATCHES, cost), 2)})
        cost_w = sum(r["est_s"] for r in batch_runs)
        if wave >= waves or total + cost_w > budget_s:
            # One more wave, last in the list: it runs where time is left.
            overflow = [dict(r, wave=f"{wave} (if time is left)") for r in batch_runs]
            break
        runs += batch_runs
        total += cost_w
    spot = 0.0
    for e in spread_order(big):
        for fmt in SPOT_FORMATS:
            if format_validity(e)[fmt]:
                continue
            c = run_cost(e, SPOT_BATCHES, cost)
            if spot + c > spot_budget_s:
                continue
            spot += c
            runs.append({"entry": e["id"], "format": fmt, "size": "large",
                         "wave": "spot", "batches": SPOT_BATCHES,
                         "est_s": round(c, 2)})
    runs += overflow
    measured = {r["entry"] for r in runs}
    left = [{"id": e["id"], "weights": e["weights"],
             "reason": ("past the sample's waves" if e["weights"] <= max_weights
                        else f"over {max_weights / 1e6:.0f}M weights and past "
                             "the spot checks' budget")}
            for e in entries if e["id"] not in measured]
    return runs, left


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("shapes")
    p = sub.add_parser("plan")
    p.add_argument("--budget", type=float, default=445.0,
                   help="estimated seconds of the waves' qfuse-bench runs")
    p.add_argument("--waves", type=int, default=8)
    p.add_argument("--max-weights", type=float, default=24e6)
    p.add_argument("--spot-budget", type=float, default=40.0)
    p.add_argument("-o", "--output", default=os.path.join(HERE, "plan.json"))
    e = sub.add_parser("emit")
    e.add_argument("entry")
    e.add_argument("format", choices=FORMAT_NAMES)
    args = ap.parse_args()
    models = load_models()
    entries, excluded = derive(models)
    by_id = {x["id"]: x for x in entries}
    if args.cmd == "shapes":
        skipped = []
        for x in entries:
            for fmt, why in format_validity(x).items():
                if why:
                    skipped.append({"entry": x["id"], "format": fmt, "reason": why})
        out = {"models": [m["name"] for m in models], "large_from_weights": LARGE,
               "formats": FORMAT_NAMES, "batches": BATCHES, "entries": entries,
               "excluded": excluded, "skipped": skipped}
        write_json(os.path.join(HERE, "shapes.json"), out, indent=1)
        for x in entries:
            print(f"{x['id']:24s} {x['kind']:8s} {x['weights'] / 1e6:8.2f}M {x['size']:5s} "
                  f"{', '.join(x['used_by'])}")
        print(f"{len(entries)} entries ({sum(x['size'] == 'large' for x in entries)} large), "
              f"{len(excluded)} excluded (tuned), {len(skipped)} format skips")
    elif args.cmd == "plan":
        runs, left = plan(entries, args.budget, args.max_weights, args.waves,
                          args.spot_budget)
        out = {"budget_s": args.budget, "max_weights": args.max_weights,
               "waves": args.waves, "spot_budget_s": args.spot_budget,
               "spot_batches": SPOT_BATCHES, "spot_formats": SPOT_FORMATS,
               "cost_model": COST, "runs": runs, "left_out": left}
        write_json(args.output, out, indent=1)
        print(f"{len(runs)} runs, est "
              f"{sum(r['est_s'] for r in runs):.0f} s; "
              f"{len({r['entry'] for r in runs})} shapes; {len(left)} left out")
    else:
        sys.stdout.write(emit(by_id[args.entry], args.format))


if __name__ == "__main__":
    main()
