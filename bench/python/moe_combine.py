#!/usr/bin/env python3
"""MoE down projection with the routing's weighted combine fused (issue 14: "the routing ... fused
where it pays"): examples/kernels/moe_w4a16_combine.tir against the same expert GEMM unfused
(moe_w4a16.tir) followed by the combine PyTorch code writes, and against the loop of cuBLAS GEMMs
followed by that combine, in one process.

The layer: T tokens, E experts, top-k (random router logits, torch.topk); every (token, expert)
pair is one row, rows sorted by expert (stable), `ends` the cumulative row counts. The down
projection takes each row's intermediate activations X [M, I] f16 (M = T*k, sorted order) times
its expert's int4 weights W_e [H, I] (group scales, zero point 8, moe.py's packing) to
Y [M, H]; the layer's output is out[t] = sum_j w[t, j] * Y[row of (t, j)], w the routing weights.

- fused: moe_w4a16_combine scales row r by w[r] and stores it at row dest[r] = t*k + j of
  Y_slots [M, H] (dest is the sort's permutation itself), then out = Y_slots.view(T, k, H).sum(1).
- tessel + index_add: moe_w4a16, then out.zero_().index_add_(0, token_of_row, Y * w) (as Hugging
  Face's MoE layers combine).
- tessel + gather-sum: moe_w4a16, then (Y * w)[inverse permutation].view(T, k, H).sum(1) (the
  fastest unfused combine written with PyTorch ops we know of: a gather and a sum, no atomics).
- cuBLAS loop + index_add: one torch.matmul per expert on the dequantized weights, then the
  index_add combine.
Each variant of both kernels (moe.py's t<T>[_r<R>][_b<B>]) is checked; the fastest of each kind
in this run is reported (`fused` the best over every --fused file; all paths in the record). Check: out for sampled tokens (the first and last 16, every 97th) against
float64 (rel_err <= 4e-3), for the fused and each unfused path; outputs poisoned with NaN first.
Timing: medians of interleaved launches (bench_common.time_interleaved), each path as a whole.

usage: moe_combine.py [--tokens 1,64,512,4096] [--experts 256] [--top-k 8] [--hidden 7168]
                      [--intermediate 2048] [--group 128] [--variants t16_r128_b2,t64,t128]
                      [--fused A.tir,B.tir] [--json FILE] [--iterations N]
"""
import argparse
import os
import sys

import torch

from bench_common import provenance
from moe import add_layer_arguments, append_record, check_and_time, compile_variants, experts, route_order


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_layer_arguments(p, tokens="1,64,512,4096", variants="t16_r128_b2,t32_r64_b4,t64,t128")
    p.add_argument("--fused", default="examples/kernels/moe_w4a16_combine.tir",
                   help="comma-separated files of fused kernels (the example's signature), each timed")
    args = p.parse_args()
    E, H, I, G, k = args.experts, args.hidden, args.intermediate, args.group, args.top_k
    # The unfused kernel, and each fused form (a file; named by its stem unless it is the example).
    files = {"moe_w4a16": "examples/kernels/moe_w4a16.tir"}
    for f in args.fused.split(","):
        stem = os.path.splitext(os.path.basename(f))[0]
        files["fused" if stem == "moe_w4a16_combine" else "fused[%s]" % stem] = f
    kernels = compile_variants(files, args.variants, "moe_combine.py")
    gen = torch.Generator(device="cuda").manual_seed(20261128)
    qp, s, w16 = experts(E, H, I, G, gen)  # the down projection: [H, I] per expert
    record = provenance("moe_combine.py")
    failures = 0
    for tokens in (int(t) for t in args.tokens.split(",")):
        # Rows sorted by expert (moe.py's route): row r is the flat index dest[r] = t*k + j of
        # the token's j-th choice; the inverse permutation orders rows by (token, j).
        dest, ends, _ = route_order(tokens, E, k, gen)
        token_of_row = dest // k
        m = dest.numel()
        inverse = torch.empty_like(dest)
        inverse[dest] = torch.arange(m, device="cuda", dtype=dest.dtype)
        x = (torch.randn(m, I, device="cuda", generator=gen) * 0.5).to(torch.float16)
        w32 = torch.rand(m, device="cuda", generator=gen) * 0.5 + 0.25  # routing weights, row order
        w16r = w32.to(torch.float16).view(m, 1)
        dest32 = dest.to(torch.int32)
        bounds = [0] + ends.tolist()
        active = [e for e in range(E) if bounds[e + 1] > bounds[e]]

        y = torch.empty(m, H, device="cuda", dtype=torch.float16)
        slots = torch.empty(m, H, device="cuda", dtype=torch.float16)
        out = torch.empty(tokens, H, device="cuda", dtype=torch.float16)

        def fused(kern):
            kern(x, qp, s, slots, ends, w32, dest32)
            return slots.view(tokens, k, H).sum(1)

        def index_add(y):
            return out.zero_().index_add_(0, token_of_row, y * w16r)

        def gather_sum(y):
            return (y * w16r).index_select(0, inverse).view(tokens, k, H).sum(1)

        def unfused(kern, combine):
            kern(x, qp, s, y, ends)
            return combine(y)

        def cublas_loop():
            for e in active:
                torch.matmul(x[bounds[e]:bounds[e + 1]], w16[e].t(), out=y[bounds[e]:bounds[e + 1]])
            return index_add(y)

        # float64 reference on sampled tokens.
        sample = sorted(set(range(min(tokens, 16))) | set(range(max(0, tokens - 16), tokens)) |
                        set(range(0, tokens, 97)))
        expert_of_row = torch.bucketize(torch.arange(m, device="cuda"), ends, right=True)
        want = []
        for t in sample:
            acc = torch.zeros(H, dtype=torch.float64, device="cuda")
            for j in range(k):
                r = int(inverse[t * k + j])
                acc += w32[r].double() * (w16[int(expert_of_row[r])].double() @ x[r].double())
            want.append(acc)
        want = torch.stack(want)
        pick = torch.tensor(sample, device="cuda")

        def rel(got):
            return (torch.linalg.norm(got[pick].double() - want) / torch.linalg.norm(want)).item()

        paths = {}
        for kind in kernels:
            if kind.startswith("fused"):
                for v, kern in kernels[kind].items():
                    paths[kind + ":" + v] = lambda kern=kern: fused(kern)
        for v, kern in kernels["moe_w4a16"].items():
            paths["index_add:" + v] = lambda kern=kern: unfused(kern, index_add)
            paths["gather_sum:" + v] = lambda kern=kern: unfused(kern, gather_sum)
        paths["cublas_loop+index_add"] = cublas_loop
        def check(fn):
            slots.fill_(float("nan"))
            y.fill_(float("nan"))
            out.fill_(float("nan"))
            return rel(fn())

        errors, passed, times, best = check_and_time(paths, check, args.iterations)
        failures += not passed
        f, ia, gs = best("fused"), best("index_add:"), best("gather_sum:")
        loop = "cublas_loop+index_add"
        rec = {"name": "moe_w4a16_combine", "tokens": tokens, "experts": E, "top_k": k, "hidden": H,
               "intermediate": I, "group": G, "rows": m, "active_experts": len(active),
               "fused": f, "fused_ms": times[f], "tessel_index_add": ia, "tessel_index_add_ms": times[ia],
               "tessel_gather_sum": gs, "tessel_gather_sum_ms": times[gs],
               "cublas_loop_index_add_ms": times[loop],
               "ratio_vs_tessel_index_add": times[ia] / times[f],
               "ratio_vs_tessel_gather_sum": times[gs] / times[f],
               "ratio_vs_cublas_loop_index_add": times[loop] / times[f],
               "all_ms": times, "rel_err": errors, "passed": passed, **record}
        append_record(args.json, rec)
        print("tokens %5d rows %6d  fused %s %.4f ms | tessel+index_add %s %.4f ms x%.2f | "
              "tessel+gather_sum %s %.4f ms x%.2f | cuBLAS loop+index_add %.4f ms x%.2f | "
              "worst rel_err %.1e%s"
              % (tokens, m, f, times[f], ia, times[ia], rec["ratio_vs_tessel_index_add"], gs, times[gs],
                 rec["ratio_vs_tessel_gather_sum"], times[loop], rec["ratio_vs_cublas_loop_index_add"],
                 max(errors.values()), "" if passed else "  FAILED " + str(errors)), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
