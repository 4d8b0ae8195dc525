#!/usr/bin/env python3
"""W4A16 variants launched many times on the same inputs, to catch an intermittent wrong result.

Split-k sums its parts in a fixed order, so every launch on the same inputs must give the same Y
bit for bit; the first launch's Y is also checked against cuBLAS f16 on the dequantized weights
(rel_err <= 1e-2). Per variant: ROUNDS rounds, each with a freshly compiled kernel object (new
split-k workspaces, zeroed) and fresh random inputs, then LAUNCHES launches of it, each into a
NaN-poisoned Y compared with the round's first. Prints, per variant, the launches that differed
and where the first difference was (row, column, and the output tile holding it).

--gemm 'PINS;MxNxK' does the same for examples/kernels/gemm.tir with those block_grid pins.
It found W4A16's missing proxy fence (bench/results/2026-11-27-split-k-repeat-h100.md).

usage: w4a16_repeat.py [--variants t128x64_sk3_b2,t64x64_sk3_b2] [--shape 70x8192x4096g128]
                       [--gemm 'split_k = 3;256x4096x8192'] [--rounds 10] [--launches 200]
"""
import argparse
import os
import re
import sys

import torch

import tessel
from bench_common import repository_root
from w4a16 import named_variant_text, pack_interleaved, pack_natural, pack_tiled, parse_variant


def explain(v, r, i, y, y0, x, w16, rows, tokens, k):
    """What a wrong launch got: how many elements differ, how many were never written (NaN),
    which output tiles, and whether y - y0 on them is a K part's product missing or counted
    twice (parts of K split three ways in 64-column K tiles, as split-k divides them)."""
    diff = (y != y0)
    where = diff.nonzero()
    nan = torch.isnan(y)[diff].sum().item()
    tiles = sorted({(int(c) // rows, int(t) // tokens) for t, c in where.tolist()})
    k_tiles = k // 64
    bounds = [p * k_tiles // 3 * 64 for p in range(4)]
    ok = diff & ~torch.isnan(y)  # the written ones: what they hold instead
    d = (y.double() - y0.double())[ok]
    fits = []
    for p in range(3):
        part = (x[:, bounds[p]:bounds[p + 1]].double() @ w16[:, bounds[p]:bounds[p + 1]].double().t())[ok]
        coef = (torch.dot(d, part) / torch.dot(part, part)).item() if part.norm() > 0 else 0.0
        resid = (torch.linalg.norm(d - coef * part) / max(torch.linalg.norm(d).item(), 1e-30)).item()
        fits.append("part %d x %.2f (residual %.2f)" % (p, coef, resid))
    print("  %s round %d launch %d: %d differ (%d NaN), tiles (weight-row tile, token tile) %s; "
          "y - y0 = %s" % (v, r, i, where.shape[0], nan, tiles[:6], "; ".join(fits)))
    ref = x.double() @ w16.double().t()
    for t, c in where.tolist()[:4]:
        parts = [(x[t, bounds[p]:bounds[p + 1]].double() @ w16[c, bounds[p]:bounds[p + 1]].double()).item()
                 for p in range(3)]
        print("    row %d column %d: y %.5f, y0 %.5f, reference %.5f, parts %s"
              % (t, c, y[t, c].item(), y0[t, c].item(), ref[t, c].item(),
                 ", ".join("%.5f" % q for q in parts)))


def repeat_round(launch, shape, lib, launches, r, describe):
    """One round: launch(out) into a NaN-poisoned f16 output of `shape`, checked against the
    library's `lib` (rel_err <= 1e-2), then `launches` more launches, each into a poisoned output
    compared bit for bit with the first. Returns (launches wrong, launches, the first wrong one
    in words); describe(i, out, first_out) words launch i that differed."""
    y0 = torch.full(shape, float("nan"), device="cuda", dtype=torch.float16)
    launch(y0)
    torch.cuda.synchronize()
    err = (torch.linalg.norm(y0.double() - lib) / torch.linalg.norm(lib)).item()
    wrong, first = 0, None
    if not err <= 1e-2:
        wrong, first = 1, "round %d first launch: rel_err %.2e against the library" % (r, err)
    y = torch.empty_like(y0)
    for i in range(launches):
        y.fill_(float("nan"))
        launch(y)
        torch.cuda.synchronize()
        if not torch.equal(y, y0):
            wrong += 1
            words = describe(i, y, y0)
            first = first or words
    return wrong, launches + 1, first


def gemm_repeat(pins, shape, rounds, launches):
    """examples/kernels/gemm.tir (C = A Bᵀ, f16) with `pins` on its block_grid (e.g. "split_k =
    3"), launched like the W4A16 variants: the number of launches whose C differs from the
    round's first (which is checked against cuBLAS)."""
    m, n, k = (int(x) for x in shape.split("x"))
    with open(os.path.join(repository_root(), "examples", "kernels", "gemm.tir")) as f:
        text = f.read().replace("block_grid %tiles_m, %tiles_n :",
                                "block_grid %%tiles_m, %%tiles_n {%s} :" % pins)
    bad, total, first_bad = 0, 0, None
    for r in range(rounds):
        kernel = tessel.compile(text, file="gemm.tir")
        torch.manual_seed(r + 5)
        a = torch.randn(m, k, device="cuda").to(torch.float16)
        b = torch.randn(n, k, device="cuda").to(torch.float16)
        wrong, launched, first = repeat_round(
            lambda c: kernel(a, b, c), (m, n), (a @ b.t()).double(), launches, r,
            lambda i, c, c0: "round %d launch %d: %d elements differ" % (r, i, (c != c0).sum().item()))
        bad, total, first_bad = bad + wrong, total + launched, first_bad or first
    print("gemm {%s} %s: %d of %d launches wrong%s" % (pins, shape, bad, total,
                                                      "; " + first_bad if first_bad else ""))
    return bad


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", default="")
    p.add_argument("--gemm", default="", metavar="PINS;MxNxK",
                   help="also the f16 GEMM example with these block_grid pins at that shape, e.g. "
                        "'split_k = 3;256x4096x8192'")
    p.add_argument("--shape", default="70x8192x4096g128")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--launches", type=int, default=200)
    args = p.parse_args()
    m, n, k, g = (int(x) for x in re.fullmatch(r"(\d+)x(\d+)x(\d+)g(\d+)", args.shape).groups())
    bad_total = 0
    if args.gemm:
        pins, shape = args.gemm.split(";")
        bad_total += gemm_repeat(pins, shape, args.rounds, args.launches)
    for v in filter(None, args.variants.split(",")):
        text = named_variant_text(v)
        rows, tokens = parse_variant(v)["rows"], parse_variant(v)["tokens"]
        bad, launches, first_bad = 0, 0, None
        explained = [0]  # the first three wrong launches of the variant are explained in detail
        for r in range(args.rounds):
            kernel = tessel.compile(text, file="gemm_w4a16_%s.tir" % v)
            torch.manual_seed(1000 * r + 17)
            q = torch.randint(0, 16, (n, k), device="cuda", dtype=torch.uint8)
            choice = parse_variant(v)
            if choice["prefix"] == "c":  # the weights stored tile by tile
                qp = pack_tiled(q, choice["rows"], choice["k_tile"])
            elif choice["prefix"] in "ps":  # the packed nibble order
                qp = pack_interleaved(q, 32) if choice["k_tile"] == 32 else pack_interleaved(q)
            else:
                qp = pack_natural(q)
            s = (torch.rand(k // g, n, device="cuda") * 0.015 + 0.005).to(torch.float16)
            x = (torch.randn(m, k, device="cuda") * 0.5).to(torch.float16)
            w16 = ((q.float() - 8.0) * s.float().repeat_interleave(g, dim=0).t()).to(torch.float16)
            def describe(i, y, y0, r=r, x=x, w16=w16):
                if explained[0] < 3:
                    explained[0] += 1
                    explain(v, r, i, y, y0, x, w16, rows, tokens, k)
                diff = (y != y0).nonzero()
                row, col = diff[0].tolist()
                return ("round %d launch %d: %d elements differ, first at row %d column %d (the "
                        "tile of weight rows %d.., tokens %d..)" % (r, i, diff.shape[0], row, col,
                                                                   col // rows * rows,
                                                                   row // tokens * tokens))

            wrong, launched, first = repeat_round(
                lambda y: kernel(x, qp, s, y), (m, n), torch.matmul(x, w16.t()).double(),
                args.launches, r, describe)
            bad, launches, first_bad = bad + wrong, launches + launched, first_bad or first
        bad_total += bad
        print("%-20s %s: %d of %d launches wrong%s" % (v, args.shape, bad, launches,
                                                        "; " + first_bad if first_bad else ""))
        sys.stdout.flush()
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
