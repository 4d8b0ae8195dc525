#!/usr/bin/env python3
"""MoE up projection with the routing's gather fused (issue 14: "the routing ... fused where it
pays"): examples/kernels/moe_w4a16_gather.tir, which reads each routed row straight from the
layer's tokens (an indirect tile: TMA one 1-row box per row, at the row the map holds), against
the same expert GEMM reading X already gathered (moe_w4a16.tir) after torch.index_select, in one
process.

The layer (moe.py's): T tokens, E experts, top-k (random router logits, torch.topk); rows sorted
by expert (stable), `ends` the cumulative row counts, token_of_row the token of each row. The up
projection: Y [M, I] = X_tokens[token_of_row] times each row's expert's int4 weights W_e [I, H]
(group scales, zero point 8, moe.py's packing). Paths:
- fused: moe_w4a16_gather(X_tokens, Q, S, Y, ends, token_of_row)
- index_select + tessel: torch.index_select(X_tokens, 0, token_of_row, out=X), then moe_w4a16.
Each variant of both kernels (moe.py's t<T>[_r<R>][_b<B>]) is checked on sampled rows against
float64 (rel_err <= 4e-3, Y poisoned with NaN first); the fastest of each kind in this run is
reported. Timing: medians of interleaved launches of each whole path.

Measured on the H100 (bench/results/2026-11-28-moe-gather-h100.md): the fused gather does not pay
at any token count (0.39-0.71x): one TMA instruction per 128-byte row. The layer gathers with
index_select; the example stays as the indirect-TMA reference and this bench as its measure.

usage: moe_gather.py [--tokens 1,64,512,4096] [--experts 256] [--top-k 8] [--hidden 7168]
                     [--intermediate 2048] [--group 128] [--variants t16_r128_b2,t64,t128]
                     [--json FILE] [--iterations N]
"""
import argparse
import sys

import torch

from bench_common import provenance
from moe import add_layer_arguments, append_record, check_and_time, compile_variants, experts, route


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_layer_arguments(p, tokens="1,64,512,4096", variants="t16_r128_b2,t32_r64_b4,t64,t128")
    args = p.parse_args()
    E, H, I, G, k = args.experts, args.hidden, args.intermediate, args.group, args.top_k
    kernels = compile_variants({kind: "examples/kernels/%s.tir" % kind
                                for kind in ("moe_w4a16", "moe_w4a16_gather")},
                               args.variants, "moe_gather.py")
    gen = torch.Generator(device="cuda").manual_seed(20261128)
    qp, s, w16 = experts(E, I, H, G, gen)  # the up projection: [I, H] per expert
    record = provenance("moe_gather.py")
    failures = 0
    for tokens in (int(t) for t in args.tokens.split(",")):
        token_of_row, ends, counts = route(tokens, E, k, gen)
        m = token_of_row.numel()
        token32 = token_of_row.to(torch.int32)
        x_tokens = (torch.randn(tokens, H, device="cuda", generator=gen) * 0.5).to(torch.float16)
        gathered = torch.empty(m, H, device="cuda", dtype=torch.float16)
        y = torch.empty(m, I, device="cuda", dtype=torch.float16)
        rows = sorted(set(range(min(m, 64))) | set(range(max(0, m - 64), m)) | set(range(0, m, 97)))
        expert_of_row = torch.bucketize(torch.arange(m, device="cuda"), ends, right=True)
        want = torch.stack([x_tokens[token_of_row[r]].double() @ w16[expert_of_row[r]].double().t()
                            for r in rows])
        pick = torch.tensor(rows, device="cuda")

        def rel(got):
            return (torch.linalg.norm(got[pick].double() - want) / torch.linalg.norm(want)).item()

        paths = {}
        for v, kern in kernels["moe_w4a16_gather"].items():
            paths["fused:" + v] = lambda kern=kern: kern(x_tokens, qp, s, y, ends, token32)
        for v, kern in kernels["moe_w4a16"].items():
            def unfused(kern=kern):
                torch.index_select(x_tokens, 0, token_of_row, out=gathered)
                kern(gathered, qp, s, y, ends)
            paths["index_select:" + v] = unfused
        def check(fn):
            y.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            return rel(y)

        errors, passed, times, best = check_and_time(paths, check, args.iterations)
        failures += not passed
        f, u = best("fused:"), best("index_select:")
        rec = {"name": "moe_w4a16_gather", "tokens": tokens, "experts": E, "top_k": k, "hidden": H,
               "intermediate": I, "group": G, "rows": m, "fused": f, "fused_ms": times[f],
               "unfused": u, "unfused_ms": times[u], "ratio": times[u] / times[f],
               "all_ms": times, "rel_err": errors, "passed": passed, **record}
        append_record(args.json, rec)
        print("tokens %5d rows %6d  fused %s %.4f ms | index_select + %s %.4f ms | ratio %.2f | "
              "worst rel_err %.1e%s" % (tokens, m, f, times[f], u, times[u], rec["ratio"],
                                        max(errors.values()), "" if passed else "  FAILED " + str(errors)),
              flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
