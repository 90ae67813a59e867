#!/usr/bin/env python3
"""Summarises the TSV files of scripts/ab-gate-trials.sh: trials, exit-1 count, its rate with a
95% Clopper-Pearson interval, median pairs, median and total wall time, and a least-squares fit
wall = overhead + per_pair * pairs over all trials (to price a fixed number of pairs)."""
import math, statistics, sys, os

def binom_cdf(k, n, p):
    return sum(math.comb(n, i) * p**i * (1 - p)**(n - i) for i in range(k + 1))

def clopper_pearson(k, n, alpha=0.05):
    def solve(f):  # f increasing in p on [0,1]; find f(p)=0
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            if f(mid) < 0: lo = mid
            else: hi = mid
        return (lo + hi) / 2
    lower = 0.0 if k == 0 else solve(lambda p: (1 - binom_cdf(k - 1, n, p)) - alpha / 2)
    upper = 1.0 if k == n else solve(lambda p: alpha / 2 - binom_cdf(k, n, p))
    return lower, upper

outdir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ab-gate-trials"
names = sys.argv[2:] or ["aa", "slow5", "slow5-t002", "slow20", "aa-pairs60"]
allpts = []
print("| set | trials | exit 1 | rate (95% CI) | exit other | median pairs | pairs range | median wall s | total wall s | load1 range |")
print("| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | --- |")
for name in names:
    path = os.path.join(outdir, name + ".tsv")
    if not os.path.exists(path): continue
    rows = [l.split("\t") for l in open(path).read().split("\n") if l.strip()]
    n = len(rows)
    rc = [int(r[1]) for r in rows]
    pairs = [int(r[2]) for r in rows if r[2] != "NA"]
    wall = [float(r[3]) for r in rows]
    load = [float(r[4]) for r in rows]
    allpts += [(int(r[2]), float(r[3])) for r in rows if r[2] != "NA"]
    k = rc.count(1)
    lo, hi = clopper_pearson(k, n)
    print(f"| {name} | {n} | {k} | {k/n:.1%} ({lo:.1%} to {hi:.1%}) | {n - k - rc.count(0)} | "
          f"{statistics.median(pairs) if pairs else 'NA'} | {min(pairs) if pairs else 'NA'}-{max(pairs) if pairs else 'NA'} | "
          f"{statistics.median(wall):.2f} | {sum(wall):.1f} | {min(load):.2f}-{max(load):.2f} |")
if len(allpts) > 2:
    xs, ys = zip(*allpts)
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in allpts) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    print(f"\nfit over {len(allpts)} trials: wall_s = {a:.3f} + {b:.4f} * pairs; at 60 pairs: {a + 60 * b:.2f} s")
