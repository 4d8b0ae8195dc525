#!/usr/bin/env python3
"""A model of causal attention's static persistent order (no GPU): the persistent loop hands tile t
to block t mod P (P = 132 SMs); query tile i of a causal kernel with 128-key tiles costs i + 1 key
tiles plus c = 1.85 key tiles of per-tile work (prologue, epilogue; from the ncu stall samples at
L = 1K, bench/results/2026-11-26-attention-short-h100.md). For each order it prints the busiest
block's work over the mean (the makespan loss of a static order) and the heads whose tiles run at
once (max and mean over 49 instants of the modeled timeline), beside how many heads' K and V fit a
50 MB L2. Orders: raster groups of G heads (heads fastest inside a group, then the grid column)
with the grid column k mapped to the query tile i as asc (i = k), desc (tq-1-k), alt (desc on odd
heads) or pair (k = 0, 1, 2, 3, ... -> tq-1, 0, tq-2, 1, ...). B*H = 128, D = 128."""
import heapq
BH=128; c=1.85; P=132
def run(L, f):
    tq=L//128; n=BH*tq
    tiles=[f(t,tq) for t in range(n)]
    assert len(set(tiles))==n
    # per block sequential
    ev=[]  # (start,end,h)
    fin=[]
    for b in range(P):
        tm=0.0
        for t in range(b,n,P):
            h,i=tiles[t]; d=(i+1)+c
            ev.append((tm,tm+d,h)); tm+=d
        fin.append(tm)
    mk=max(fin); mean=sum(fin)/P
    # heads active at sample times
    import bisect
    samples=[mk*x/50 for x in range(1,50)]
    hs=[]
    for s in samples:
        hs.append(len({h for (a,e,h) in ev if a<=s<e}))
    cap=50e6/(L*512)
    return mk/mean, max(hs), sum(hs)/len(hs), cap
def raster(G, imap=lambda i,h,tq:i):
    def f(t,tq):
        per=G*tq; g=t//per; first=g*G; rows=min(BH-first,G); r=t%per
        h=first+r%rows; i=r//rows
        return h, imap(i,h,tq)
    return f
rev=lambda i,h,tq: tq-1-i
alt=lambda i,h,tq: tq-1-i if h%2 else i
pairk=lambda k,h,tq: tq-1-k//2 if k%2==0 else k//2
for L in (1024,2048,4096,8192,16384):
    print(L)
    for G in (2,4,8,16):
        for nm,m in (("asc",lambda i,h,tq:i),("desc",rev),("alt",alt),("pair",pairk)):
            r=run(L,raster(G,m))
            print("   G=%2d %-5s makespan/mean %.3f heads max %3d avg %5.1f (L2 holds %.0f)"%(G,nm,*r))
