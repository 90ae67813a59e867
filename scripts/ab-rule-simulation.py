#!/usr/bin/env python3
"""The adaptive A/B procedure (looks at 8..240 pairs, each at alpha/K) simulated with three rules:
A: regression when the estimate exceeds the threshold, "no change" by a 95% interval (the rule before e674586);
B: the estimate beyond half the threshold, "no change" by a 95% interval; C: half the threshold and TOST at alpha/K
(convbench::compare::ab today). Pair log-ratios: t(5) noise of sd sigma plus 3% of pairs 40% off. Needs numpy and scipy.
Usage: python3 scripts/ab-rule-simulation.py [runs per cell]. Prints the share of runs ending in "regression".
"""
import numpy as np
from scipy import stats
rng=np.random.default_rng(1)
LOOKS=[8,16,32,64,128,240]; ALPHA=0.01; K=len(LOOKS); LA=ALPHA/K; THR=0.05
def yuen(d):
    n=len(d); s=np.sort(d); g=int(np.floor(0.2*n)); kept=s[g:n-g]; m=kept.mean()
    w=np.clip(s,s[g],s[n-g-1]); sd=w.std(ddof=1); se=sd/(0.6*np.sqrt(n)); df=n-2*g-1
    return m,se,df
def decide(d,rule,final=False):
    m,se,df=yuen(d); t=stats.t(df)
    q=t.ppf(0.975)
    change=np.expm1(m)
    p=1-t.cdf(m/se) if m>=0 else t.cdf(m/se)
    lo,hi=np.expm1(m-q*se),np.expm1(m+q*se)
    floor=THR if rule=='A' else THR/2
    if p<=LA and change>floor and lo>0: return 'reg'
    if p<=LA and change<-floor and hi<0: return 'imp'
    if rule=='C':
        qq=t.ppf(1-LA); lo,hi=np.expm1(m-qq*se),np.expm1(m+qq*se)
    if lo>=-THR and hi<=THR: return 'none'
    return 'inc'
def trial(delta,sigma,rule):
    d=np.array([])
    for L in LOOKS:
        new=np.log1p(delta)+sigma*rng.standard_t(5,size=L-len(d))/np.sqrt(5/3)
        # outliers: 3% of pairs off by +-40%
        mask=rng.random(len(new))<0.03; new[mask]+=rng.choice([-0.4,0.4],mask.sum())
        d=np.concatenate([d,new])
        v=decide(d,rule)
        if v!='inc': return v,len(d)
    return v,len(d)
import sys
N=int(sys.argv[1]) if len(sys.argv)>1 else 1000
for sigma in [0.03,0.05,0.08]:
  for rule in 'ABC':
    out=[]
    for delta in [0,0.025,0.05,0.2]:
        r=[trial(delta,sigma,rule) for _ in range(N)]
        reg=sum(v=='reg' for v,_ in r)/N; pairs=np.median([n for _,n in r]); inc=sum(v=='inc' for v,_ in r)/N
        out.append(f"d={delta:.3f}: reg {reg:.3f} inc {inc:.2f} pairs {pairs:.0f}")
    print(f"sigma {sigma} rule {rule}: "+" | ".join(out),flush=True)
