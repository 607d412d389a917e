#!/usr/bin/env python3
"""Compares where two builds of the same kernels read and write memory, for
kernels qfuse-sim cannot run (wgmma, docs/gpu-sim.md): a change to address
arithmetic must leave every store, and every copy into shared memory, in
place. Each kernel's integer instructions are evaluated once each, in file
order (branches and predicates ignored, so the prologue's copies and the
first pass of every block count), for a set of thread and block ids, with
each pointer parameter a distinct symbolic base; then, per kernel and ids:

  - the global stores, in program order (the same values to the same
    places: both builds emit the epilogue in the same loop order);
  - the global loads and the cp.async copies (source and destination), as
    sets.

An address that depends on loaded data (act_order's permutations) is
unknown in both builds and compared as such. A register a loop carries
is taken at its first definition in file order, so two builds whose K
loops carry different induction variables (a pointer against a step
index) can differ in their copies without moving one: where the kernel
runs on qfuse-sim, that is the check of record.

    scripts/ptx-addresses.py old.ptx new.ptx [--kernels REGEX] [--blocks-x 0,1,3]

Exits 1 if any kernel of the first file differs or is missing in the second.
"""
import argparse
import re
import sys

MASK64 = (1 << 64) - 1
SPECIAL = ("%tid.x", "%ctaid.x", "%ctaid.y", "%ctaid.z")


def kernel_bodies(text):
    bodies = {}
    for m in re.finditer(r"\.entry (\w+)\(", text):
        end = text.find(".entry", m.end())
        bodies[m.group(1)] = text[m.start(): end if end > 0 else len(text)]
    return bodies


def integer_op(base, op, a, bits):
    """The result of one integer instruction, or None if not modelled."""
    mask = (1 << bits) - 1
    if base == "mul":
        if ".wide" in op:
            return (a[0] & 0xFFFFFFFF) * (a[1] & 0xFFFFFFFF)
        if ".hi" in op:
            return ((a[0] & mask) * (a[1] & mask)) >> bits
        return a[0] * a[1]
    if base == "mad":
        if ".wide" in op:
            return (a[0] & 0xFFFFFFFF) * (a[1] & 0xFFFFFFFF) + a[2]
        return a[0] * a[1] + a[2]
    ops = {
        "add": lambda: a[0] + a[1],
        "sub": lambda: a[0] - a[1],
        "shl": lambda: a[0] << a[1],
        "shr": lambda: (a[0] & mask) >> a[1],
        "and": lambda: a[0] & a[1],
        "or": lambda: a[0] | a[1],
        "xor": lambda: a[0] ^ a[1],
        "not": lambda: ~a[0],
        "min": lambda: min(a[0] & mask, a[1] & mask),
        "max": lambda: max(a[0] & mask, a[1] & mask),
        "div": lambda: (a[0] & mask) // (a[1] & mask),
        "rem": lambda: (a[0] & mask) % (a[1] & mask),
        "bfe": lambda: ((a[0] & mask) >> a[1]) & ((1 << a[2]) - 1),
        "selp": lambda: a[0] if a[2] else a[1],
    }
    return ops[base]() if base in ops else None


def split_operands(rest):
    return [x.strip() for x in re.split(r",(?![^\[]*\])", rest)]


def accesses(body, tid, ctaid):
    """[(kind, address...)] of one thread's evaluated instructions."""
    header = body[: body.find(")")]
    params = [l.split()[-1].rstrip(",") for l in header.splitlines() if ".param" in l]
    regs = {p: (i + 1) << 40 for i, p in enumerate(params)}
    regs.update(zip(SPECIAL, (tid, ctaid[0], ctaid[1], ctaid[2])))

    def value(tok):
        if tok in regs:
            return regs[tok]
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", tok):
            return int(tok, 16)
        return None

    def address(tok):
        m = re.fullmatch(r"\[([%\w.]+)(?:\+(-?\d+))?\]", tok)
        base = value(m.group(1)) if m else None
        return None if base is None else (base + int(m.group(2) or 0)) & MASK64

    found = []
    for line in body.splitlines():
        line = line.strip().rstrip(";")
        parts = line.split(None, 1)
        if len(parts) < 2 or line[0] in "/.$@{}":
            continue
        op, rest = parts
        args = split_operands(rest)
        base = op.split(".")[0]
        if base == "cp" and op.startswith("cp.async.") and "shared.global" in op:
            found.append(("copy", address(args[0]), address(args[1])))
            continue
        if base in ("st", "ld") and ".global" in op:
            found.append((base, op.split(".")[-1], address(args[0] if base == "st" else args[1])))
            regs.pop(args[0], None)
            continue
        if base == "ld" and ".param" in op:
            m = re.match(r"\[(\w+)\]", args[1])
            regs[args[0]] = value(m.group(1)) if m else None
            continue
        operands = [value(x) for x in args[1:]]
        result = None
        if base in ("mov", "cvta"):
            result = operands[0]
        elif base == "cvt":
            m = re.search(r"\.[usb](8|16|32|64)\.[usb](8|16|32|64)$", op)
            if m and operands[0] is not None:
                result = operands[0] & ((1 << int(m.group(1))) - 1)
        elif base == "setp" and None not in operands:
            x, y = (v & MASK64 for v in operands)
            cmp = op.split(".")[1]
            result = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y,
                      "eq": x == y, "ne": x != y}.get(cmp)
        elif None not in operands and operands:
            bits = 64 if re.search(r"64$", op) else 32
            result = integer_op(base, op, operands, bits)
            if result is not None and not isinstance(result, bool):
                result &= (1 << bits) - 1 if ".wide" not in op else MASK64
        if result is None:
            regs.pop(args[0], None)
        else:
            regs[args[0]] = result
    return found


def compare(old, new, tid, ctaid):
    """The reason the two builds differ for these ids, or ''."""
    a, b = accesses(old, tid, ctaid), accesses(new, tid, ctaid)
    stores = lambda acc: [x for x in acc if x[0] == "st"]
    others = lambda acc: sorted((x for x in acc if x[0] != "st"), key=repr)
    if stores(a) != stores(b):
        return "stores"
    if others(a) != others(b):
        return "loads or cp.async copies"
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--kernels", default=".", help="regex on kernel names")
    ap.add_argument("--blocks-x", default="0",
                    help="blockIdx.x values, comma-separated: only blocks inside "
                         "every kernel's grid (a block past M may read elsewhere)")
    args = ap.parse_args()
    old = kernel_bodies(open(args.old).read())
    new = kernel_bodies(open(args.new).read())
    blocks_x = [int(v) for v in args.blocks_x.split(",")]
    differing = 0
    for name in sorted(k for k in old if re.search(args.kernels, k)):
        if name not in new:
            print(f"{name}: missing in {args.new}")
            differing += 1
            continue
        threads = int(re.search(r"maxntid (\d+)", old[name]).group(1))
        ids = [(t, (x, y, z)) for t in sorted({0, 5, 37, threads // 2 + 3, threads - 1})
               for x in blocks_x for y in (0, 1, 3) for z in (0, 1)]
        reasons = [(t, c, compare(old[name], new[name], t, c)) for t, c in ids]
        bad = [r for r in reasons if r[2]]
        stores = len([x for x in accesses(new[name], 0, (0, 0, 0)) if x[0] == "st"])
        if bad:
            t, c, why = bad[0]
            print(f"{name}: {why} differ (thread {t}, block {c}; {len(bad)} of {len(ids)} ids)")
            differing += 1
        else:
            print(f"{name}: same ({stores} stores a thread, {len(ids)} ids)")
    print(f"{differing} kernel(s) differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
