"""Model picks over session 46's mgrid (training shapes, int4-g128, H200,
4 stages) at M = 64 and 96 for three candidate lists, and the measured time
of each pick: main before session 47, main (block_m 32 at 33-64), and main
with split_k 4 for block_n 64 ({64, 4}) past batch 32.

    python3 bench/results/2026-12-06-s47/listeval.py > listeval.txt
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, 'bench/cost-model'); sys.path.insert(0, 'python-frontend')
import fit
from qfuse.records import read_json
p = json.load(open('bench/cost-model/params.json'))
p = p.get('params', p)
D = 'bench/results/2026-12-06-s46/mgrid/zoo'
def blockms(m, m32):
    out = [min(64, -(-m // 16) * 16)]
    if 16 < m <= 32: out.append(16)
    if (m > 32 if m32 else m > 64): out.append(32)
    if m >= 128: out.append(128)
    return out
def pairs(extra):
    l = [(128, 1), (64, 1), (64, 2), (32, 2), (32, 4)]
    if extra: l.insert(3, (64, 4))
    return l
for f in sorted(glob.glob(D + '/*-b*.json.xz')):
    d = read_json(f)
    m = int(re.search(r'-b(\d+)\.json', f).group(1))
    if m <= 32: continue
    g = re.search(r'--gemm \d+x(\d+)x(\d+)', d['command']); n, k = int(g.group(1)), int(g.group(2))
    meas = {}
    for pl in d['artifact_plans']:
        lab = os.path.basename(pl['artifact'])[:-4].split('-')[-1]
        meas[lab] = pl['stats']['median_ms'] * 1000
    res = {}
    for name, m32, extra in (('main-old', False, False), ('m32', True, False), ('m32+s4', True, True)):
        parts = {}
        for bm in blockms(m, m32):
            for bn, s in pairs(extra):
                for c in (1, 2):
                    if bn // 32 * s > 16 or -(-k // 64) < s * c: continue
                    lab = f'M{bm}N{bn}S{s}K64T4C{c}'
                    parts[lab] = fit.predict_parts(p, m, n, k, bm, bn, s, 64, 4, c, fit.FORMATS['int4'])
        pick = fit.select(parts)
        res[name] = (pick, meas.get(pick))
    print(os.path.basename(f).split('.')[0], {k: (v[0], v[1] and round(v[1], 2)) for k, v in res.items()}, 'default', round(meas.get('default', 0), 2))
