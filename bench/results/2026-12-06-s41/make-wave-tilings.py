import json, os, subprocess, sys
sys.path.insert(0, 'python-frontend')
from qfuse.encodings import encoding_text
out = 'build-s54'
shapes = [(3584, 3584), (3584, 18944)]
fmts = ['int4-g128', 'nf4', 'int8']
tilings = {'r2s1': (8, 1, 2), 'r4s2': (8, 2, 1)}
runs = []
for n, k in shapes:
    for fmt in fmts:
        enc = encoding_text(fmt)
        w = f"!qf.weight<{n}x{k}, #qf.enc<{enc}>>"
        mlir = f"{out}/art/s{n}x{k}-{fmt}.mlir"
        open(mlir, 'w').write(f'func.func @f(%x: tensor<?x{k}xf16>) -> tensor<?x{n}xf16> {{\n  %w = qf.weight_ref "w" : {w}\n  %y = qf.matmul %x, %w : tensor<?x{k}xf16>, {w} -> tensor<?x{n}xf16>\n  return %y : tensor<?x{n}xf16>\n}}\n')
        arts = []
        for name in ['default'] + list(tilings):
            qfa = f"{out}/art/s{n}x{k}-{fmt}-{name}.qfa"
            cmd = ['build/bin/qfuse-compile', mlir, '--batch-sizes=1,2', '--chip=sm_90a']
            if name != 'default':
                bn, s, u = tilings[name]
                db = [{'m': m, 'n': n, 'k': k, 'encoding': enc,
                       'tiling': f"matvec, block_m = {m}, block_n = {bn}" + (f", k_unroll = {u}" if u > 1 else "") + (f", split_k = {s}" if s > 1 else ""),
                       'measured_us': 1.0} for m in (1, 2)]
                dbf = f"{out}/art/db-{n}x{k}-{fmt}-{name}.json"; json.dump(db, open(dbf, 'w'))
                cmd.append(f'--tuning-db={dbf}')
            r = subprocess.run(cmd + ['-o', qfa], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            ptx = subprocess.run(cmd + ['--emit=mlir', '-o', '-'], capture_output=True, text=True).stdout
            import re
            print(name, fmt, n, k, sorted(set(re.findall(r'tiling<matvec[^>]*>', ptx))))
            arts.append(qfa)
        runs.append(f"wave-s{n}x{k}-{fmt} " + " ".join(f"--artifact {a}" for a in arts) + f" --batch 1,2 --gemm 1x{n}x{k} --gemm 2x{n}x{k} --check")
open(f"{out}/runs.txt", 'w').write("\n".join(runs) + "\n")
