#!/usr/bin/env python3
"""Fits the mma.sync time model (lib/Dialect/QF/Transforms/MmaTimeModel.cpp)
to the tuning sweeps under bench/results: every tune-*.json whose artifacts
are mma.sync candidates (labels M<block_m>N<block_n>S<split_k>K<block_k>
T<stages>C<cluster_k>) of the training set, Llama-3-8B's projections in
int4-g128 (batches 2-512), NF4 (4-32), int8 (8), NVFP4 (64) and 2:4 +
int4 on mma.sp (4-64; its one term, spMma, is fitted with the dense terms
held by --free spMma, and not adopted: params.json has none, which is
MmaTimeModel.cpp's model). Zoo shapes are never part of it.

  python3 bench/cost-model/fit.py [--restarts 4] [--start P.json]
      [--free a,b] [--rounds 25] [--json params.json]
  python3 bench/cost-model/fit.py --params P.json          # evaluate only
      [--sweeps tune-*,par-*]   # which sweeps (default: tune-*)
      [--sweep-dirs 2026-12-06-s44/wgmma-sweep,...]  # make-sweep.py folders
  python3 bench/cost-model/fit.py --params bench/cost-model/params.json \
      --check-listing LISTING     # qfuse-compile --list-tilings output

Prints the fitted parameters (bench/cost-model/params.json; MmaTimeModel.cpp's
kParams copies them), the model's error and its regret per format: per
(format, shape, batch) the measured time of the candidate it ranks first
against the fastest measured. The objective is the mean squared log error
plus the mean and the largest log regret, so that a candidate's rank
matters as much as its time; mma.sp candidates of more than
MAX_SPARSE_K_SLICES are timed but never picked, as in the compiler. This
script and MmaTimeModel.cpp are one
formula: change both (test/Tools/qfuse-compile/mma-time-model-fit-py.mlir
compares them with --check-listing).
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
from qfuse.records import read_json, record_paths  # noqa: E402
SHAPES = {"q_proj": (4096, 4096), "o_proj": (4096, 4096),
          "k_proj": (1024, 4096), "v_proj": (1024, 4096),
          "gate_proj": (14336, 4096), "up_proj": (14336, 4096),
          "down_proj": (4096, 14336), "lm_head": (128256, 4096)}
SMS, BANDWIDTH_GBPS, MAX_SHARED_PER_SM = 132, 4800, 228 * 1024
LABEL = re.compile(r"M(\d+)N(\d+)S(\d+)K(\d+)T(\d+)(?:C(\d+))?")
# CostModel.cpp's kPredictionTie: predictions this close are a tie.
PREDICTION_TIE = 0.01
START = dict(Tm=5.2, Ti=1.08, dec=7.46, decTable=11.0, decInt8=7.46,
             grp=10.0, Tc=1.0, a0=371.0, a1=55.0, F0=2.8, Fc=0.18, BWd=8.5,
             BWl2=7.9, Bsm=53.4, L0=2.5)
# The DRAM bandwidth (GB/s) of each GPU the sweeps ran on, by the name in
# their JSON; the model's cycle counts are the same for both (one SM).
GPU_BANDWIDTH = {"NVIDIA H100 80GB HBM3": 3350, "NVIDIA H200": 4800}
# Not fitted (no training sweep measures them): fp8's cvt decode relative
# to int4's, and a zero point's read per group relative to a scale's.
FP8_DECODE, ZERO_GROUP = 0.7, 1.0
# 2:4 f16 on mma.sp: moving the kept halves, a quarter of int4's (not fitted).
HALF_DECODE = 0.25
# The cycles of an mma.sp.m16n8k32 in m16n8k16s (Tm): 1 is the model as
# MmaTimeModel.cpp has it (half the tensor time of the dense kernel), the
# value where a parameter file has no spMma. Fitted on the 2:4 + int4 sweeps
# with every other term held (bench/results/2026-12-06-s39/sweeps).
SPARSE_START = dict(spMma=1.0)
# MmaCandidates.cpp's kMaxSparseKSlices: the compiler never ranks an mma.sp
# candidate of more K slices (split_k x cluster_k).
MAX_SPARSE_K_SLICES = 8
# kSparseClusterMaxBlockN: the widest mma.sp block the compiler ranks in a
# cluster.
SPARSE_CLUSTER_MAX_BLOCK_N = 64


class Format:
    """What the model needs of an encoding (MmaTimeModel.h's
    MmaLaunchShape): code bits, the kernel's decode family (DecodeFamily.h:
    int4, int8, fp8, table or, 2:4 f16, half), the group (0:
    per channel), the bytes of a scale and the bits of a zero point per
    group, 2:4 (mma.sp: half the codes and mmas, a 2-bit position per
    kept code; spMma prices its mma), and whether the kernel
    keeps a shared code table (DecodeFamily.h usesSharedCodeTable: table
    formats but 4-bit codes of a constant table, decoded by their bits or
    from registers)."""

    def __init__(self, bits, decode, group, scale_bytes, zero_bits=0,
                 sparse=False, named_table=False):
        self.bits, self.decode, self.group = bits, decode, group
        self.scale_bytes, self.zero_bits = scale_bytes, zero_bits
        self.sparse = sparse
        self.shared_table = decode == "table" and (bits != 4 or named_table)


# The training sweeps' formats (Llama-3-8B shapes) by the name in their
# file names, and the zoo's others (for --check-listing and zoo_error.py).
FORMATS = {"int4": Format(4, "int4", 128, 2), "nf4": Format(4, "table", 64, 4),
           "nvfp4": Format(4, "table", 16, 1), "int8": Format(8, "int8", 0, 2),
           # bench/tune.py's tag of the named encoding 2:4+int4 (mma.sp).
           "2_4_int4": Format(4, "int4", 128, 2, sparse=True)}


def parse_encoding(text):
    """A Format from #qf.enc's body ('int4, group = 128, scale = f16')."""
    fields = [f.strip() for f in text.split(",")]
    kind = fields[0]
    bits = {"int8": 8, "uint8": 8, "fp8e4m3": 8, "f16": 16}.get(kind, 4)
    decode = {"int4": "int4", "uint4": "int4", "int8": "int8",
              "uint8": "int8", "fp8e4m3": "fp8", "f16": "half"}.get(kind, "table")
    opts = dict(f.split(" = ") for f in fields[1:] if " = " in f)
    if kind == "codebook":
        bits = int(opts["bits"])
    scale = 0 if "scale" not in opts else \
        {"f32": 4, "f16": 2, "bf16": 2}.get(opts["scale"], 1)
    zero = {"int": bits, "float": 8 * scale}.get(opts.get("zero"), 0)
    return Format(bits, decode, int(opts.get("group", 0)), scale, zero,
                  opts.get("sparse") == "2:4",
                  opts.get("table", "").startswith('"'))


def registers(block_m):
    """ptxas's registers per thread of the int4 kernel, sm_90."""
    return {16: 96, 32: 144, 48: 168, 64: 160}.get(block_m, 243)


def groups_per_step(fmt, bk):
    """Scale groups in a block_k step as the kernel lays them out
    (TensorCoreStage.h): at least one slot, one per channel."""
    return 1 if fmt.group == 0 else max(1, bk // fmt.group)


def shared_bytes(bm, bn, s, bk, st, c, fmt, members=1):
    """qf::getMmaSharedBytes (TensorCoreStage.h's tensorCoreSharedBytes)."""
    warps = bn // 32 * s * members
    slots = groups_per_step(fmt, bk)
    codes = 32 * (bk // 2 * fmt.bits // 8 + bk // 8) if fmt.sparse \
        else bk // 32 * 32 * 32 * fmt.bits // 8
    per_warp = codes + slots * 128 * (2 if fmt.zero_bits else 1)
    stage = s * bm * bk * 2 + warps * per_warp
    hand_over = max(s - 1, 1 if c > 1 else 0, members - 1) * \
        (bn // 32 * members) * bm * 32 * 4
    table = (16 * 32 * 4 if fmt.bits <= 4 else 256 * 4) \
        if fmt.shared_table else 0
    return max(st * stage, hand_over) + table


def decode_instrs(p, fmt):
    """Decode instructions per 8-row tile and 16-wide k slab."""
    return {"int4": p["dec"], "table": p["decTable"], "int8": p["decInt8"],
            "fp8": FP8_DECODE * p["dec"],
            "half": HALF_DECODE * p["dec"]}[fmt.decode]


def group_instrs(p, fmt, bm, bk):
    """Instructions of a warp per block_k step for its scale groups: per
    8-row tile and group a scale (and zero point) read and converted, and
    where the kernel defers the scales (TensorCorePlan.cpp: group >= 32 x
    m tiles + 32) an f32 fma per accumulator to fold the group's sums."""
    if fmt.group == 0:
        return 0.0  # per channel: folded once, after the K loop
    m_tiles = bm // 16
    fold = 4 * m_tiles if fmt.group >= 32 * m_tiles + 32 else 0
    reads = p["grp"] * (1 + (ZERO_GROUP if fmt.zero_bits else 0))
    return bk / fmt.group * 4 * (reads + fold)


def predict(*args, **kwargs):
    """Predicted microseconds of a launch (predict_parts' first)."""
    return predict_parts(*args, **kwargs)[0]


def predict_parts(p, m, n, k, bm, bn, s, bk, st, c, fmt=FORMATS["int4"],
                  members=1, sms=SMS, bandwidth=BANDWIDTH_GBPS):
    """(predicted microseconds, the blocks' part of them): MmaTimeModel.cpp's
    predictMmaTime."""
    n_pad = -(-n // 32) * 32
    m_blocks, n_blocks = -(-m // bm), -(-n_pad // bn)
    blocks = m_blocks * n_blocks * c
    warps = bn // 32 * s * members
    smem = shared_bytes(bm, bn, s, bk, st, c, fmt, members)
    resident = max(1, min(MAX_SHARED_PER_SM // smem,
                          65536 // (registers(bm) * 32 * warps),
                          64 // warps, 32))
    per_sm = -(-blocks // sms)
    rounds = -(-per_sm // resident)
    q = min(resident, per_sm)
    slabs = bk // 16
    # 2:4 issues half the mmas and decodes half the codes, and streams half
    # the codes plus a 2-bit position per kept code.
    share = 0.5 if fmt.sparse else 1.0
    bits = fmt.bits / 2 + 1 if fmt.sparse else fmt.bits
    mmas = slabs * (bm // 16) * 4 * share
    decode = decode_instrs(p, fmt) * share
    mma_cycles = p["Tm"] * (p.get("spMma", 1.0) if fmt.sparse else 1.0)
    tensor = q * warps * mmas * mma_cycles / 4
    issue = q * warps * (slabs * 4 * decode + mmas + slabs * 8
                         + group_instrs(p, fmt, bm, bk)) * p["Ti"] / 4
    # One warp's step: a fixed chain plus, per k slab, the mma chain and
    # its own decode (table lookups wait on shared memory).
    chain = p["a0"] + slabs * (p["a1"] + 4 * decode * p["Tc"])
    fill = q * (s * bm * bk * 2 + warps * bk * bits * 4) / p["Bsm"]
    steps = -(-k // (c * s * bk))
    block_us = steps * max(chain, tensor + issue, fill) / 1.7e3 + p["F0"] \
        + p["Fc"] * (c - 1)
    scale = bandwidth / BANDWIDTH_GBPS
    # Codes, then a scale and a zero point per group (per row: per channel).
    groups = 1 if fmt.group == 0 else -(-k // fmt.group)
    weights = n_pad * members * (k * bits / 8 + groups * (
        fmt.scale_bytes + fmt.zero_bits / 8))
    l2 = m * k * 2 * n_blocks + weights * m_blocks
    memory = weights / (p["BWd"] * scale * 1e6) + l2 / (p["BWl2"] * scale * 1e6)
    return max(rounds * block_us, memory) + p["L0"], rounds * block_us


def format_of(name):
    """The training format of a sweep's file name, or None: Llama-3-8B
    tensor-core sweeps only (act_order and silu_mul launches are kernels
    of another shape)."""
    if "act_order" in name or "gated" in name or "llama3-8b" not in name:
        return None
    for fmt in ("2_4_int4", "nvfp4", "nf4", "int8", "int4"):
        if f"-{fmt}" in name:
            return fmt
    return None


def load(stems=("tune-*",)):
    """{(format, projection, batch, GPU bandwidth): {label: median us}} over
    the sweeps whose file names match `stems` (bench/tune.py's tune-*;
    bench/mma-parallel's par-* hold tilings past the compiler's list)."""
    table = {}
    results = os.path.join(ROOT, "bench/results/**")
    for path in sorted(p for stem in stems for p in record_paths(results, stem)):
        fmt = format_of(os.path.basename(path))
        if not fmt:
            continue
        record = read_json(path)
        add_plans(table, record, fmt,
                  r".*-(?P<proj>\w+_proj|lm_head)-b(?P<m>\d+)-(?P<label>M\S+)\.qfa$")
    return table


# bench/pipeline-depth/make-sweep.py's encodings (its COMPILE file's ENC)
# by the training format they time.
SWEEP_FORMATS = {"int4, group = 128, scale = f16": "int4",
                 "nf4, group = 64, scale = f32": "nf4",
                 "int4, group = 128, scale = f16, sparse = 2:4": "2_4_int4"}


def load_sweep_dirs(patterns, table):
    """Adds make-sweep.py folders (glob patterns under bench/results, each
    holding COMPILE and the <shape>-b<M>.json of bench/zoo/run-zoo.sh) to
    `table`: their shapes are training shapes by make-sweep's own rule, N
    and K read from each run's --gemm."""
    results = os.path.join(ROOT, "bench/results")
    for folder in sorted(f for pat in patterns
                         for f in glob.glob(os.path.join(results, pat))):
        enc = re.search(r"ENC='([^']*)'", open(os.path.join(folder, "COMPILE")).read())
        fmt = SWEEP_FORMATS.get(enc.group(1)) if enc else None
        if not fmt:
            continue
        for path in record_paths(folder, "*-b[0-9]*"):
            record = read_json(path)
            gemm = re.search(r"--gemm \d+x(\d+)x(\d+)", record["command"])
            name = re.match(r"(.+)-b\d+$", os.path.basename(path).split(".json")[0])
            if not gemm or not name:
                continue
            shape = (int(gemm.group(1)), int(gemm.group(2)))
            if SHAPES.setdefault(name.group(1), shape) != shape:
                sys.exit(f"{path}: {name.group(1)} is {shape}, elsewhere {SHAPES[name.group(1)]}")
            add_plans(table, record, fmt,
                      r".*-b(?P<m>\d+)-(?P<label>M\S+)\.qfa$", name.group(1))


def add_plans(table, record, fmt, pattern, proj=None):
    """Each mma.sync plan of `record` whose artifact name `pattern` splits
    into m, label (and proj, unless given), its median us, the fastest of
    repeats."""
    bandwidth = GPU_BANDWIDTH[record["gpu"]]
    for plan in record["artifact_plans"]:
        hit = re.match(pattern, os.path.basename(plan["artifact"]))
        if not hit or not LABEL.fullmatch(hit["label"]):
            continue
        key = (fmt, proj or hit["proj"], int(hit["m"]), bandwidth)
        t = plan["stats"]["median_ms"] * 1000
        lab = hit["label"] if "C" in hit["label"] else hit["label"] + "C1"
        table.setdefault(key, {})
        table[key][lab] = min(t, table[key].get(lab, 1e9))


def tiling(label):
    return tuple(int(x or 1) for x in LABEL.fullmatch(label).groups())


def select(parts):
    """The label selectMma picks from {label: (us, blocks' us)}: the fastest,
    or among those within PREDICTION_TIE of it the least blocks' work."""
    fastest = min(us for us, _ in parts.values())
    ties = [lab for lab, (us, _) in parts.items()
            if us <= fastest * (1 + PREDICTION_TIE)]
    return min(ties, key=lambda lab: parts[lab][1])


def ranked(fmt, m, label):
    """Whether the compiler ranks this candidate (MmaCandidates.cpp):
    mma.sp in at most MAX_SPARSE_K_SLICES K slices, block_n 128 only
    without a cluster, and past batch 16 only from its own grid (block_k
    64, 4 stages, clusters of 2)."""
    _, bn, s, bk, st, c = tiling(label)
    if not fmt.sparse:
        return True
    if s * c > MAX_SPARSE_K_SLICES or (c > 1 and bn > SPARSE_CLUSTER_MAX_BLOCK_N):
        return False
    return m <= 16 or (bk == 64 and st == 4 and c <= 2)


def score(p, table):
    """(objective, mean squared log error over every timing, {key: log
    regret among the candidates the compiler ranks}, {format: [log
    errors]})."""
    errors, regrets, by_format = [], {}, {}
    for (fmt, proj, m, bandwidth), cands in table.items():
        n, k = SHAPES[proj]
        parts = {lab: predict_parts(p, m, n, k, *tiling(lab), FORMATS[fmt],
                                    bandwidth=bandwidth)
                 for lab in cands}
        pred = {lab: us for lab, (us, _) in parts.items()}
        logs = [math.log(pred[lab] / t) for lab, t in cands.items()]
        errors += [x * x for x in logs]
        by_format.setdefault(fmt, []).extend(logs)
        listed = {lab: t for lab, t in cands.items()
                  if ranked(FORMATS[fmt], m, lab)}
        pick = select({lab: parts[lab] for lab in listed})
        regrets[(fmt, proj, m, bandwidth)] = math.log(
            listed[pick] / min(listed.values()))
    loss = statistics.mean(errors)
    r = list(regrets.values())
    return (loss + 2 * statistics.mean(r) + max(r), loss, regrets, by_format)


def fit(table, restarts, start=START, free=None, rounds=25, seed=1):
    """Coordinate descent on the log of each parameter in `free` (all by
    default) from `start`, then from `restarts` - 1 random perturbations
    of it; the best objective wins."""
    random.seed(seed)
    free = free or list(start)
    best = None
    for r in range(restarts):
        p = dict(start) if r == 0 else dict(start, **{
            key: start[key] * math.exp(random.uniform(-0.7, 0.7))
            for key in free})
        o = score(p, table)
        step = {key: 0.4 for key in free}
        for _ in range(rounds):
            for key in free:
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


def report(table, p):
    _, loss, regrets, by_format = score(p, table)
    print(f"{sum(len(c) for c in table.values())} timings, "
          f"{len(table)} (format, shape, batch) groups")
    r = list(regrets.values())
    print(f"rms log error {math.sqrt(loss):.3f}; regret mean "
          f"{math.exp(statistics.mean(r)):.3f}x, worst "
          f"{math.exp(max(r)):.3f}x")
    for fmt in sorted(by_format):
        logs = by_format[fmt]
        rf = [v for key, v in regrets.items() if key[0] == fmt]
        print(f"  {fmt:6s} {len(logs):5d} timings: median predicted/measured "
              f"{math.exp(statistics.median(logs)):.2f}, rms log error "
              f"{math.sqrt(statistics.mean(x * x for x in logs)):.3f}; "
              f"regret mean {math.exp(statistics.mean(rf)):.3f}x, worst "
              f"{math.exp(max(rf)):.3f}x over {len(rf)} groups")


LISTED = re.compile(r"^#qf\.tiling<mma, ([^>]*)>\s*// m = (\d+), mma, "
                    r"([0-9.]+) us predicted")
HEADER = re.compile(r"^// m = \d+, n = (\d+), k = (\d+), !qf\.weight<\d+x\d+,"
                    r" #qf\.enc<(.*)>>( x 2 \(gate and up)?.*, (sm_\d+a?):")
CHIPS = {"sm_80": (108, 2039), "sm_89": (142, 864), "sm_90": (132, 4800),
         "sm_90a": (132, 4800)}


def check_listing(p, lines):
    """Recomputes every mma line of `qfuse-compile --list-tilings` and
    returns the lines whose prediction differs from the compiler's (the
    listing prints two decimals): MmaTimeModel.cpp and this script must
    stay one formula."""
    bad, shape, checked = [], None, 0
    for line in lines:
        head = HEADER.match(line)
        if head:
            n, k, enc, gated, chip = head.groups()
            members = 2 if gated else 1
            shape = (int(n) // members, int(k), parse_encoding(enc), members,
                     *CHIPS[chip])
            continue
        hit = LISTED.match(line)
        if not hit or not shape:
            continue
        fields = dict(f.split(" = ") for f in hit.group(1).split(", "))
        # predict's order; the printer leaves out fields at their default.
        t = [int(fields.get(f, d)) for f, d in
             (("block_m", 1), ("block_n", 1), ("split_k", 1),
              ("block_k", 0), ("stages", 1), ("cluster_k", 1))]
        n, k, fmt, members, sms, bw = shape
        us = predict(p, int(hit.group(2)), n, k, *t, fmt, members, sms, bw)
        checked += 1
        if abs(us - float(hit.group(3))) > 0.011:
            bad.append(f"{line.strip()}  (fit.py: {us:.2f} us)")
    return checked, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--restarts", type=int, default=4)
    ap.add_argument("--json", help="write the parameters here")
    ap.add_argument("--params", help="evaluate these parameters, no fit")
    ap.add_argument("--start", help="start the fit from these parameters")
    ap.add_argument("--free", help="fit only these parameters (comma list)")
    ap.add_argument("--rounds", type=int, default=25,
                    help="coordinate descent rounds per restart")
    ap.add_argument("--sweeps", default="tune-*",
                    help="comma list of sweep file stems under bench/results "
                         "(par-* adds session 35's wider H100 sweep)")
    ap.add_argument("--sweep-dirs", default="",
                    help="comma list of make-sweep.py result folders (globs "
                         "under bench/results) added to the sweeps")
    ap.add_argument("--check-listing", metavar="FILE",
                    help="compare with qfuse-compile --list-tilings output "
                         "(- for stdin) under --params or params.json")
    args = ap.parse_args()
    p = json.load(open(args.params)) if args.params else None
    if args.check_listing and p is None:
        p = json.load(open(os.path.join(ROOT, "bench/cost-model/params.json")))
    if args.check_listing:
        src = sys.stdin if args.check_listing == "-" else \
            open(args.check_listing)
        checked, bad = check_listing(p, src)
        print(f"{checked} mma predictions checked, {len(bad)} differ")
        print("\n".join(bad))
        sys.exit(1 if bad or not checked else 0)
    table = load(args.sweeps.split(","))
    load_sweep_dirs([d for d in args.sweep_dirs.split(",") if d], table)
    if p is None:
        start = dict(SPARSE_START, **(json.load(open(args.start))
                                      if args.start else START))
        p, _ = fit(table, args.restarts, start,
                   args.free.split(",") if args.free else None, args.rounds)
    print("parameters:", {key: round(v, 4) for key, v in p.items()})
    report(table, p)
    if args.json:
        # Rounded as MmaTimeModel.cpp's kParams copies them.
        write_json(args.json, {key: round(v, 4) for key, v in p.items()},
                   indent=1)


if __name__ == "__main__":
    main()
