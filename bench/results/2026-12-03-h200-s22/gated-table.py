#!/usr/bin/env python3
"""Tables of calls 3 and 4 (gated wgmma): microseconds per candidate and
the ratio of cuBLAS fp16's time to the candidate's, from the qfuse-bench
logs in r3/ (training shapes) and r4/ (zoo shapes)."""
import glob, os, re, sys

here = os.path.dirname(os.path.abspath(__file__))


def rows(folder, prefix="gu"):
    out = []
    for log in sorted(glob.glob(os.path.join(here, folder, prefix + "*-b*.log"))):
        name = os.path.basename(log)[:-4]
        if name.startswith("check-"):
            continue
        cub, plans = None, {}
        for line in open(log):
            f = line.split()
            if line.startswith("cublas"):
                cub = float(f[5]) * 1000
            elif line.startswith("plan"):
                label = re.sub(r".*-b\d+-", "", f[1]).replace(".qfa", "")
                plans[label] = float(f[5]) * 1000
        shape, batch = re.match(r"\w+?(\d+x\d+)-b(\d+)", name).groups()
        out.append((shape, int(batch), cub, plans))
    return sorted(out, key=lambda r: (r[0], r[1]))


for folder, title in (("r3", "training gate/up shapes"), ("r4", "zoo gate/up shapes")):
    data = rows(folder)
    labels = list(data[0][3]) if data else []
    print(f"\n### {title} ({folder}/): us, and cuBLAS fp16 / candidate\n")
    print("| shape | M | cuBLAS | " + " | ".join(labels) + " |")
    print("|---|---|---|" + "---|" * len(labels))
    for shape, m, cub, plans in data:
        cells = [f"{plans[l]:.1f} ({cub / plans[l]:.2f})" if l in plans else "" for l in labels]
        print(f"| {shape} | {m} | {cub:.1f} | " + " | ".join(cells) + " |")
data = rows("r3", "w")
if data:
    labels = list(data[0][3])
    print("\n### plain training shapes (r3/w*): us, and cuBLAS fp16 / candidate\n")
    print("| shape | M | cuBLAS | " + " | ".join(labels) + " |")
    print("|---|---|---|" + "---|" * len(labels))
    for shape, m, cub, plans in data:
        cells = [f"{plans[l]:.1f} ({cub / plans[l]:.2f})" if l in plans else "" for l in labels]
        print(f"| {shape} | {m} | {cub:.1f} | " + " | ".join(cells) + " |")
