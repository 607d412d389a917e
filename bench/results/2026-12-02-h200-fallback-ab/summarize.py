import json,glob,os,sys
res={}
modes=[]
for f in sorted(glob.glob('*.json')):
    name=f[:-5]
    mode,shape=('act-order',name[len('act-order-'):]) if name.startswith('act-order') else name.split('-',1)
    if mode not in modes: modes.append(mode)
    d=json.load(open(f))
    cub={c['m']:c['stats']['median_ms'] for c in d['cublas']}
    for p in d['artifact_plans']:
        m=p['batch']; t=p['stats']['median_ms']
        res.setdefault(shape,{}).setdefault(m,{})[mode]=t
        res[shape][m]['cublas']=cub.get(m)
print(f"{'shape':>12} {'M':>5} {'cuBLAS us':>9} " + " ".join(f"{m:>14}" for m in modes))
for shape in res:
    for m in sorted(res[shape]):
        r=res[shape][m]; c=r['cublas']
        f=lambda k: f"{r[k]*1000:7.1f} {c/r[k]:5.2f}x" if k in r else '-'
        print(f"{shape:>12} {m:>5} {c*1000:9.1f} " + " ".join(f"{f(k):>14}" for k in modes))
