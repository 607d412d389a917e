"""The scale-run round's table: per shape, format and batch, main's time
(base) and the change's (new) in us, and the change's ratio to cuBLAS fp16
of the same process.  python3 table.py [this folder]"""
import glob, json, os, sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
print("| shape | format | " + " | ".join(f"b{m}" for m in (1, 2, 4, 8, 16, 32, 64, 128)) + " |")
print("|---|---|" + "---|" * 8)
for f in sorted(glob.glob(os.path.join(here, "zoo-*.json"))):
    shape = os.path.basename(f)[4:-5]
    j = json.load(open(f))
    cb = {g["m"]: g["stats"]["median_ms"] * 1000 for g in j["cublas"]}
    res = {}
    for pl in j["artifact_plans"]:
        a = pl["artifact"]
        kind = "base" if "/base/" in a else "new"
        fmt = a.split(shape + "-")[1][:-4]
        res.setdefault(fmt, {}).setdefault(pl["batch"], {})[kind] = pl["stats"]["median_ms"] * 1000
    for fmt, rows in res.items():
        cells = []
        for m in sorted(rows):
            r = rows[m]
            old = f"{r['base']:.1f} -> " if "base" in r else ""
            cells.append(f"{old}{r['new']:.1f} ({cb[m] / r['new']:.2f}x)")
        print(f"| {shape} | {fmt} | " + " | ".join(cells) + " |")
