"""Tables of session 21's wgmma overlap rounds (round1.sh b, round2.sh):
the Llama-3-8B tune candidates (best per kernel family, sync from round 1b,
overlapped from round 2) and the zoo shapes compiled both ways.
    python3 summarize.py R1B_TUNE_DIR R2_TUNE_DIR ZOO_JSON_DIR"""
import glob, json, os, re, sys


def collect(d):
    out = {}
    for f in glob.glob(os.path.join(d, "*.json")):
        name = os.path.basename(f)[:-5]
        if name == "manifest":
            continue
        j = json.load(open(f))
        t = j["artifact_plans"][0]["stats"]["median_ms"] * 1000
        cb = j["cublas"][0]["stats"]["median_ms"] * 1000
        m = re.match(r"(\w+)-b(\d+)-(.*)", name)
        out[name] = (m.group(1), int(m.group(2)), m.group(3), t, cb)
    return out


def tune_table(sync_dir, ovl_dir):
    sync, ovl = collect(sync_dir), collect(ovl_dir)
    man = json.load(open(os.path.join(sync_dir, "manifest.json")))
    default = {c["name"] for c in man["candidates"] if c["default"]}
    rows = {}
    for name, (shape, m, label, t, cb) in sync.items():
        r = rows.setdefault((shape, m), {"cb": cb})
        if name in default:
            r["default"] = (label, t)
        fam = label[0]
        if fam not in r or t < r[fam][1]:
            r[fam] = (label, t)
    for name, (shape, m, label, t, cb) in ovl.items():
        r = rows[(shape, m)]
        if "O" not in r or t < r["O"][1]:
            r["O"] = (label, t)
    print("| shape | batch | cuBLAS us | default | best mma | best wgmma | best wgmma overlapped |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        r = rows[key]
        cell = lambda k: f"{r[k][0]} {r[k][1]:.1f} ({r['cb'] / r[k][1]:.2f}x)" if k in r else "-"
        print(f"| {key[0]} | {key[1]} | {r['cb']:.1f} | {cell('default')} | {cell('M')} | "
              f"{cell('W')} | {cell('O')} |")


def zoo_table(d):
    print("| shape | batch | cuBLAS us | main us | overlapped us | overlapped / main |")
    print("|---|---|---|---|---|---|")
    for f in sorted(glob.glob(os.path.join(d, "zoo-*-sync.json"))):
        shape = os.path.basename(f)[4:-10]
        res = {}
        for v in ("sync", "ovl"):
            j = json.load(open(f.replace("-sync.json", f"-{v}.json")))
            for pl in j["artifact_plans"]:
                res.setdefault(pl["batch"], {})[v] = pl["stats"]["median_ms"] * 1000
            if v == "sync":
                for g in j["cublas"]:
                    res[g["m"]]["cb"] = g["stats"]["median_ms"] * 1000
        for m in sorted(res):
            r = res[m]
            print(f"| {shape} | {m} | {r['cb']:.1f} | {r['sync']:.1f} | {r['ovl']:.1f} | "
                  f"{r['ovl'] / r['sync']:.3f} |")


if __name__ == "__main__":
    tune_table(sys.argv[1], sys.argv[2])
    print()
    zoo_table(sys.argv[3])
