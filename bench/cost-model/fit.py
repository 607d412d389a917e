#!/usr/bin/env python3
"""Fits the mma.sync time model (lib/Dialect/QF/Transforms/MmaTimeModel.cpp)
to the tuning sweeps under bench/results: every tune-*.json whose artifacts
are mma.sync candidates (labels M<block_m>N<block_n>S<split_k>K<block_k>
T<stages>C<cluster_k>) of the training set, Llama-3-8B's int4-g128
projections at batches 2-512. Zoo shapes are never part of it.

  python3 bench/cost-model/fit.py [--restarts 4] [--json params.json]

Prints the fitted parameters (to copy into MmaTimeModel.cpp's kParams), the
model's error, and its regret: per (shape, batch) the measured time of the
candidate it ranks first against the fastest measured. The objective is the
mean squared log error plus the mean and the largest log regret, so that a
candidate's rank matters as much as its time. This script and
MmaTimeModel.cpp are one formula: change both.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python-frontend"))
from qfuse.atomic import write_json  # noqa: E402
SHAPES = {"q_proj": (4096, 4096), "o_proj": (4096, 4096),
          "k_proj": (1024, 4096), "v_proj": (1024, 4096),
          "gate_proj": (14336, 4096), "up_proj": (14336, 4096),
          "down_proj": (4096, 14336), "lm_head": (128256, 4096)}
SMS, BANDWIDTH_GBPS, MAX_SHARED_PER_SM = 132, 4800, 228 * 1024
LABEL = re.compile(r"M(\d+)N(\d+)S(\d+)K(\d+)T(\d+)(?:C(\d+))?")
START = dict(Tm=12.5, Ti=0.71, dec=6.0, a0=200.0, a1=75.0, F0=3.9, Fc=0.3,
             BWd=6.9, BWl2=13.9, Bsm=75.0, L0=2.1)


def registers(block_m):
    """ptxas's registers per thread of the int4 kernel, sm_90."""
    return {16: 96, 32: 144, 48: 168, 64: 160}.get(block_m, 243)


def shared_bytes(bm, bn, s, bk, st, c, bits=4, group=128, zeros=False):
    """TensorCorePlan's pipeline and hand-over bytes (TensorCoreStage.h)."""
    warps = bn // 32 * s
    groups = max(1, bk // group)
    stage = s * bm * bk * 2 + warps * (bk // 32 * 32 * 32 * bits // 8 +
                                       groups * 128 * (2 if zeros else 1))
    hand_over = max(s - 1, 1 if c > 1 else 0) * (bn // 32) * bm * 32 * 4
    return max(st * stage, hand_over)


def predict(p, m, n, k, bm, bn, s, bk, st, c, bits=4, decode=1.0,
            sms=SMS, bandwidth=BANDWIDTH_GBPS):
    n_pad = -(-n // 32) * 32
    m_blocks, n_blocks = -(-m // bm), -(-n_pad // bn)
    blocks = m_blocks * n_blocks * c
    warps = bn // 32 * s
    smem = shared_bytes(bm, bn, s, bk, st, c, bits)
    resident = max(1, min(MAX_SHARED_PER_SM // smem,
                          65536 // (registers(bm) * 32 * warps),
                          64 // warps, 32))
    per_sm = -(-blocks // sms)
    rounds = -(-per_sm // resident)
    q = min(resident, per_sm)
    slabs = bk // 16
    mmas = slabs * (bm // 16) * 4
    tensor = q * warps * mmas * p["Tm"] / 4
    issue = q * warps * (slabs * 4 * p["dec"] * decode + mmas + slabs * 8) \
        * p["Ti"] / 4
    chain = p["a0"] + p["a1"] * slabs
    fill = q * (s * bm * bk * 2 + warps * bk * bits * 4) / p["Bsm"]
    steps = -(-k // (c * s * bk))
    block_us = steps * max(chain, tensor + issue, fill) / 1.7e3 + p["F0"] \
        + p["Fc"] * (c - 1)
    scale = bandwidth / BANDWIDTH_GBPS
    weights = n_pad * k * bits / 8 * 1.03
    l2 = m * k * 2 * n_blocks + weights * m_blocks
    memory = weights / (p["BWd"] * scale * 1e6) + l2 / (p["BWl2"] * scale * 1e6)
    return max(rounds * block_us, memory) + p["L0"]


def load():
    """{(projection, batch): {label: median us}} over the int4 sweeps."""
    table = {}
    for path in glob.glob(os.path.join(ROOT, "bench/results/**/tune-*.json"),
                          recursive=True):
        name = os.path.basename(path)
        if "int4" not in name or "act_order" in name or "gated" in name:
            continue
        for plan in json.load(open(path))["artifact_plans"]:
            art = os.path.basename(plan["artifact"])
            hit = re.match(r".*-(\w+_proj|lm_head)-b(\d+)-(M\S+)\.qfa$", art)
            if not hit or not LABEL.fullmatch(hit.group(3)):
                continue
            key = (hit.group(1), int(hit.group(2)))
            t = plan["stats"]["median_ms"] * 1000
            lab = hit.group(3) if "C" in hit.group(3) else hit.group(3) + "C1"
            table.setdefault(key, {})
            table[key][lab] = min(t, table[key].get(lab, 1e9))
    return table


def tiling(label):
    return tuple(int(x or 1) for x in LABEL.fullmatch(label).groups())


def score(p, table):
    errors, regrets = [], []
    for (proj, m), cands in table.items():
        n, k = SHAPES[proj]
        pred = {lab: predict(p, m, n, k, *tiling(lab)) for lab in cands}
        errors += [math.log(pred[lab] / t) ** 2 for lab, t in cands.items()]
        pick = min(pred, key=pred.get)
        regrets.append(math.log(cands[pick] / min(cands.values())))
    loss = statistics.mean(errors)
    return (loss + 2 * statistics.mean(regrets) + max(regrets), loss,
            regrets)


def fit(table, restarts, seed=1):
    random.seed(seed)
    best = None
    for r in range(restarts):
        p = dict(START) if r == 0 else {
            key: v * math.exp(random.uniform(-0.7, 0.7))
            for key, v in START.items()}
        o = score(p, table)
        step = {key: 0.4 for key in p}
        for _ in range(25):
            for key in p:
                for d in (1 + step[key], 1 / (1 + step[key])):
                    q = dict(p, **{key: p[key] * d})
                    oq = score(q, table)
                    if oq[0] < o[0]:
                        p, o = q, oq
                        break
                else:
                    step[key] *= 0.6
        if best is None or o[0] < best[1][0]:
            best = (p, o)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--restarts", type=int, default=4)
    ap.add_argument("--json", help="write the parameters here")
    args = ap.parse_args()
    table = load()
    p, (_, loss, regrets) = fit(table, args.restarts)
    print(f"{sum(len(c) for c in table.values())} timings, "
          f"{len(table)} (shape, batch) groups")
    print("parameters:", {key: round(v, 4) for key, v in p.items()})
    print(f"rms log error {math.sqrt(loss):.3f}; regret mean "
          f"{math.exp(statistics.mean(regrets)):.3f}x, worst "
          f"{math.exp(max(regrets)):.3f}x")
    if args.json:
        write_json(args.json, p, trailing_newline=False, indent=1)


if __name__ == "__main__":
    main()
