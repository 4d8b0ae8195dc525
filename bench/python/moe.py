#!/usr/bin/env python3
"""Mixed-type MoE expert GEMM (issue 14): tessel's examples/kernels/moe_w4a16.tir (moe_w8a16.tir with
--weights fp8: e4m3 experts, DeepSeek-V3's weight format, with f16 group scales), one launch over
every expert that received tokens, against a loop of cuBLAS f16 GEMMs over the experts (on the
dequantized weights) and, where PyTorch offers it, torch._grouped_mm (bf16), in one process.

Routing (outside the timed kernels, as the issue's "loop of cuBLAS GEMMs" baseline also has it):
T tokens, E experts, top-k: random router logits, torch.topk, every (token, expert) pair becomes
one row of X, sorted by expert (a stable sort), `ends` the cumulative row counts (int32). The
timed product is an expert GEMM of a DeepSeek-V3-like layer: X [T*k, H] f16 (H = hidden) times
each expert's W_e [I, H] (I = the expert's intermediate size) as W4A16: Q [E, I, H] uint4, two a
byte in the kernel's packed nibble order (a uint8 [E, I, H/2] array, `pack_experts`), group
scales S [E, H/G, I] f16, w = (Q - 8) * S.
Check: Y poisoned (NaN); rows 0..63, the last 64 and every 97th against float64 products of the
dequantized weights (rel_err <= 4e-3), all of Y against the cuBLAS loop's output (<= 1e-2).
Timing: the kernel, the cuBLAS loop (one torch.matmul per expert with rows) and _grouped_mm
interleaved (bench_common.time_interleaved, medians). Reported: ms, TFLOP/s, GB/s of the bytes
the kernel must move (the weights of the experts that got rows, their scales, X, Y), and the
ratios loop ms / tessel ms and grouped_mm ms / tessel ms.

--variants t16_r128_b2,t64,...: tile variants of the kernel (variant_text), each checked and
timed; --tuned adds tessel.Variants over them, tuned at each token count (the measured
dispatcher a user gets: Variants.tune, then a call launches the fastest), as "tuned:<choice>".
--tessel-only: the check launch and nothing timed (for a profiler: the kernel launches once per
token count).

usage: moe.py [--tokens 1,64,512,4096,8192] [--experts 256] [--top-k 8] [--hidden 7168]
              [--intermediate 2048] [--group 128] [--json FILE] [--iterations N] [--tessel-only]
              [--variants t64,...] [--tuned]
"""
import argparse
import json
import os
import re
import sys

import torch

import tessel
from bench_common import provenance, repository_root, time_interleaved
from w4a16 import pack_interleaved


def pack_experts(q):
    """uint8 [E, N, K] values 0..15 -> uint8 [E, N, K/2] in moe_w4a16.tir's packed order (each
    expert's rows as w4a16.pack_interleaved packs them)."""
    e, n, k = q.shape
    return pack_interleaved(q.reshape(e * n, k)).view(e, n, k // 2)


VARIANT = re.compile(r"^t(16|32|64|128|192|256)(?:_r(64|128))?(?:_b([1-4]))?(?:_s([1-9]|1[0-6]))?$")


# Byte of column c in its 64-column block of moe_w8a16.tir's fp8 weights: (2,4,2,4):(1,16,2,4).
FP8_POSITION = [(c & 1) + 16 * ((c >> 1) & 3) + 2 * ((c >> 3) & 1) + 4 * ((c >> 4) & 3) for c in range(64)]


def pack_fp8_experts(q):
    """float8_e4m3fn [E, N, K] -> the same values in moe_w8a16.tir's storage order (each row's
    64-column blocks permuted: column c of a block at byte FP8_POSITION[c]), as a float8 tensor."""
    e, n, k = q.shape
    inverse = [0] * 64
    for c, at in enumerate(FP8_POSITION):
        inverse[at] = c
    index = torch.tensor(inverse, device=q.device)
    raw = q.view(torch.uint8).view(e, n, k // 64, 64)
    return raw.index_select(3, index).reshape(e, n, k).view(torch.float8_e4m3fn)


def variant_text(text, name):
    """moe_w4a16.tir as variant `name` = t<T>[_r<R>][_b<B>][_s<S>]: T tokens per block (64 as
    written; find_group's tile, X's tile, the accumulator and the transposed store), R weight rows
    per block (128 as written; 64 is one consumer warpgroup), B blocks per SM (the grid's
    `blocks_per_sm` pin; 1 as written; B > 1 was refused from 2026-11-27 to 2026-11-28, see
    bench/results/2026-11-28-w4a16-proxy-fence-h100.md) and S pipeline stages (the K loop's
    `stages` pin; the pipeline's default as written). T = 192 gives each expert one token tile at
    4096 tokens over 256 experts, top-8 (bench/kernel-variants/moe/moe_w4a16_t192.tir); T = 256
    spills under ptxas (a 64x256 accumulator beside the dequantized weights), and so does T = 192
    in moe_w4a16_combine.tir (340 bytes); moe_w8a16.tir's T = 192 does not."""
    m = VARIANT.match(name)
    if not m:
        raise SystemExit("moe.py: variant %r is not t<16|32|64|128|192|256>[_r<64|128>][_b<1-4>][_s<1-16>]" % name)
    tokens, rows, blocks, stages = m.group(1), m.group(2) or "128", m.group(3), m.group(4)
    head, body = text.split("kernel @", 1)
    swaps = [
        ("%tokens = const {value = 64}", "%tokens = const {value = @T@}"),
        ("find_group %ends, %bt {tile = 64}", "find_group %ends, %bt {tile = @T@}"),
        ("register<f32>[128,64]", "register<f32>[128,@T@]"),
        ("shape = [64,64], window = 0} : global<f16>[64,64]", "shape = [@T@,64], window = 0} : global<f16>[@T@,64]"),
        ("%sX = copy %X_tile : shared<f16>[64,64]", "%sX = copy %X_tile : shared<f16>[@T@,64]"),
        ("%sXt = transpose %sX : shared<f16>[64,64]", "%sXt = transpose %sX : shared<f16>[64,@T@]"),
        ("register<f32>[64,128]", "register<f32>[@T@,128]"),
        ("shape = [64,128], window = 0} : global<f16>[64,128]", "shape = [@T@,128], window = 0} : global<f16>[@T@,128]"),
        ("register<f16>[64,128]", "register<f16>[@T@,128]"),
    ]
    # moe_w4a16_combine.tir's epilogue: the routing weights' tile of T rows.
    optional = [
        ("shape = [64], window = 0} : global<f32>[64]", "shape = [@T@], window = 0} : global<f32>[@T@]"),
        ("%w_rows = copy %W_tile : register<f32>[64]", "%w_rows = copy %W_tile : register<f32>[@T@]"),
    ]
    for old, new in swaps:
        if old not in body:
            raise SystemExit("moe.py: variant %s: %r not in moe_w4a16.tir" % (name, old))
        body = body.replace(old, new)
    for old, new in optional:
        body = body.replace(old, new)
    body = body.replace("128", rows).replace("@T@", tokens)  # every 128 of the body is a weight row count
    if blocks:
        grid = re.compile(r"%bn, %bt = block_grid %tiles_n, %tiles_t (?:\{([^}]*)\} )?:")
        found = grid.search(body)
        if not found:
            raise SystemExit("moe.py: variant %s: no block_grid %%tiles_n, %%tiles_t in the kernel" % name)
        pins = ", ".join(p for p in [found.group(1), "blocks_per_sm = %s" % blocks] if p)
        body = body[:found.start()] + "%%bn, %%bt = block_grid %%tiles_n, %%tiles_t {%s} :" % pins + \
            body[found.end():]
    if stages:
        loop = "iter(%c = %zero) :"
        if loop not in body:
            raise SystemExit("moe.py: variant %s: %r not in moe_w4a16.tir" % (name, loop))
        body = body.replace(loop, "iter(%%c = %%zero) {stages = %s} :" % stages)
    return head + "kernel @" + body


def route_order(tokens, experts, top_k, gen):
    """Random router logits, torch.topk, every (token, expert) pair one row, rows sorted by expert
    (stable): each row's flat index t*k + j (the sort's permutation), the rows per expert and
    their int32 ends."""
    logits = torch.randn(tokens, experts, device="cuda", generator=gen)
    chosen = torch.topk(logits, top_k, dim=1).indices.reshape(-1)
    order = torch.sort(chosen, stable=True).indices
    counts = torch.bincount(chosen, minlength=experts)
    ends = torch.cumsum(counts, 0).to(torch.int32)
    return order, ends, counts


def route(tokens, experts, top_k, gen):
    """Rows of X as (token, expert) pairs sorted by expert: each row's token, the int32 row ends
    per expert and the rows per expert."""
    order, ends, counts = route_order(tokens, experts, top_k, gen)
    return order // top_k, ends, counts


def add_layer_arguments(p, tokens, variants):
    """The MoE layer's options that moe.py, moe_combine.py and moe_gather.py share."""
    p.add_argument("--tokens", default=tokens)
    p.add_argument("--experts", type=int, default=256)
    p.add_argument("--top-k", type=int, default=8)
    p.add_argument("--hidden", type=int, default=7168)
    p.add_argument("--intermediate", type=int, default=2048)
    p.add_argument("--group", type=int, default=128)
    p.add_argument("--variants", default=variants,
                   help="comma-separated variants (t<T>[_r<R>][_b<B>][_s<S>], see variant_text) timed side by side")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=20)


def compile_variants(files, variants, script):
    """{kind: {variant: kernel}} for each kernel file of `files` ({kind: path from the repository
    root}) and each variant name; a variant the compiler refuses is reported and left out, a
    kind none of whose variants compiles ends the script."""
    root = repository_root()
    kernels = {}
    for kind, path in files.items():
        text = open(os.path.join(root, path)).read()
        kernels[kind] = {}
        for v in variants.split(","):
            try:
                kernels[kind][v] = tessel.compile(variant_text(text, v), file=os.path.basename(path))
            except Exception as e:  # a variant the compiler refuses (e.g. _bB, B > 1): say why, keep the others
                print("%s %-16s does not compile: %s" % (kind, v, str(e).splitlines()[0]))
        if not kernels[kind]:
            raise SystemExit("%s: no variant of %s compiles" % (script, kind))
    return kernels


def check_and_time(paths, check, iterations, tolerance=4e-3):
    """The routing benches' measurement of their paths ({name: callable}, each a whole path):
    every path checked first (`check(fn)` poisons the outputs, runs fn and returns its relative
    error against float64), then all timed interleaved (medians). Returns (errors, passed: every
    error within `tolerance`, times {name: ms}, best(prefix): the fastest path so named)."""
    errors = {name: check(fn) for name, fn in paths.items()}
    passed = all(e <= tolerance for e in errors.values())
    names = list(paths)
    times = dict(zip(names, time_interleaved([paths[n] for n in names], 3, iterations)))

    def best(prefix):
        return min((n for n in names if n.startswith(prefix)), key=lambda n: times[n])

    return errors, passed, times, best


def append_record(path, record):
    """One JSON line appended to `path` (nothing without a path)."""
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def experts(E, N, K, G, gen, fp8=False):
    """E experts' [N, K] weights: int4 (values 0..15, zero point 8) or e4m3, in the kernels'
    storage order; their group scales [E, K/G, N] f16; and the dequantized weights, each
    rounded to f16 once, as the kernel builds them for wgmma (for the references and cuBLAS)."""
    if fp8:
        q = torch.empty(E, N, K, device="cuda", dtype=torch.float8_e4m3fn)
        for e in range(E):
            q[e] = (torch.rand(N, K, device="cuda", generator=gen) * 16.0 - 8.0).to(torch.float8_e4m3fn)
        qp = pack_fp8_experts(q)
    else:
        q = torch.randint(0, 16, (E, N, K), device="cuda", dtype=torch.uint8, generator=gen)
        qp = pack_experts(q)
    s = (torch.rand(E, K // G, N, device="cuda", generator=gen) * 0.015 + 0.005).to(torch.float16)
    w16 = torch.empty(E, N, K, device="cuda", dtype=torch.float16)
    for e in range(E):
        value = q[e].float() if fp8 else q[e].float() - 8.0
        w16[e] = (value * s[e].float().repeat_interleave(G, dim=0).t()).to(torch.float16)
    return qp, s, w16


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_layer_arguments(p, tokens="1,64,512,4096,8192", variants="t64")
    p.add_argument("--tessel-only", action="store_true")
    p.add_argument("--tuned", action="store_true",
                   help="also time tessel.Variants over the variants, tuned at each token count")
    p.add_argument("--weights", choices=["int4", "fp8"], default="int4",
                   help="int4 (moe_w4a16.tir, zero point 8) or fp8 e4m3 (moe_w8a16.tir) experts")
    args = p.parse_args()
    E, H, I, G = args.experts, args.hidden, args.intermediate, args.group
    fp8 = args.weights == "fp8"
    file = "moe_w8a16.tir" if fp8 else "moe_w4a16.tir"
    kernels = compile_variants({file: "examples/kernels/" + file}, args.variants, "moe.py")[file]
    gen = torch.Generator(device="cuda").manual_seed(20261127)
    qp, s, w16 = experts(E, I, H, G, gen, fp8)
    w_bf16 = w16.to(torch.bfloat16) if hasattr(torch, "_grouped_mm") else None
    dispatch = tessel.Variants(list(kernels.values()), names=list(kernels)) if args.tuned else None
    record = provenance("moe.py")
    failures = 0
    for tokens in (int(t) for t in args.tokens.split(",")):
        token_of_row, ends, counts = route(tokens, E, args.top_k, gen)
        x_tokens = (torch.randn(tokens, H, device="cuda", generator=gen) * 0.5).to(torch.float16)
        x = x_tokens[token_of_row].contiguous()
        m = x.shape[0]
        bounds = [0] + ends.tolist()
        active = [e for e in range(E) if bounds[e + 1] > bounds[e]]

        def cublas_loop(out):
            for e in active:
                torch.matmul(x[bounds[e]:bounds[e + 1]], w16[e].t(), out=out[bounds[e]:bounds[e + 1]])

        lib = torch.empty(m, I, device="cuda", dtype=torch.float16)
        if not args.tessel_only:
            cublas_loop(lib)
        rows = sorted(set(range(min(m, 64))) | set(range(max(0, m - 64), m)) | set(range(0, m, 97)))
        expert_of_row = torch.bucketize(torch.arange(m, device="cuda"), ends, right=True)
        want = torch.stack([x[r].double() @ w16[expert_of_row[r]].double().t() for r in rows])
        lib_err = {}
        rel_err = {}
        for t, kernel in kernels.items():
            y = torch.full((m, I), float("nan"), device="cuda", dtype=torch.float16)
            kernel(x, qp, s, y, ends)
            torch.cuda.synchronize()
            got = y[torch.tensor(rows, device="cuda")].double()
            rel_err[t] = (torch.linalg.norm(got - want) / torch.linalg.norm(want)).item()
            lib_err[t] = 0.0 if args.tessel_only else \
                (torch.linalg.norm(y.double() - lib.double()) / torch.linalg.norm(lib.double())).item()
        passed = {t: rel_err[t] <= 4e-3 and lib_err[t] <= 1e-2 for t in kernels}
        failures += sum(not ok for ok in passed.values())
        if args.tessel_only:
            for t in kernels:
                print("tokens %5d rows %6d experts %3d  %s rel_err %.1e%s" %
                      (tokens, m, len(active), t, rel_err[t], "" if passed[t] else "  FAILED"))
            continue
        out, out_lib = torch.empty_like(y), torch.empty_like(y)
        fns = [(lambda k=kernel: k(x, qp, s, out, ends)) for kernel in kernels.values()]
        timed = list(kernels)
        if dispatch is not None:  # the measured dispatcher: tune at this shape, then call as one
            dispatch.tune(x, qp, s, out, ends, warmup=2, iterations=5, progress=False)
            timed.append("tuned:" + dispatch.choose(x, qp, s, out, ends))
            rel_err[timed[-1]] = rel_err[timed[-1][6:]]
            lib_err[timed[-1]] = lib_err[timed[-1][6:]]
            passed[timed[-1]] = passed[timed[-1][6:]]
            fns.append(lambda: dispatch(x, qp, s, out, ends))
        fns.append(lambda: cublas_loop(out_lib))
        grouped = None
        if w_bf16 is not None:
            xb = x.to(torch.bfloat16)
            try:
                torch._grouped_mm(xb, w_bf16.transpose(-2, -1), offs=ends)
                fns.append(lambda: torch._grouped_mm(xb, w_bf16.transpose(-2, -1), offs=ends))
            except Exception as e:  # not offered for this dtype / device: say so, keep the rest
                print("torch._grouped_mm unavailable: %s" % str(e).splitlines()[0])
        # What fusing the routing could save (issue 14: "fused where it pays"): the gather that
        # builds X from the tokens (index_select) and the weighted combine of the top-k rows of
        # the down projection's output [rows, hidden] back into the tokens (index_add_), timed in
        # the same run; the kernel reads X already gathered and leaves the combine out.
        weight_of_row = torch.rand(m, 1, device="cuda", generator=gen).to(torch.float16)
        y_down = torch.randn(m, H, device="cuda", generator=gen).to(torch.float16)
        gathered = torch.empty_like(x)
        combined = torch.empty(tokens, H, device="cuda", dtype=torch.float16)
        routing = [lambda: torch.index_select(x_tokens, 0, token_of_row, out=gathered),
                   lambda: combined.zero_().index_add_(0, token_of_row, y_down * weight_of_row)]
        n_routing = len(routing)
        fns = routing + fns
        times = time_interleaved(fns, 3, args.iterations)
        gather_ms, combine_ms = times[0], times[1]
        times = times[n_routing:]
        loop = times[len(timed)]
        grouped = times[len(timed) + 1] if len(times) > len(timed) + 1 else None
        weight_bytes = len(active) * I * H // (1 if fp8 else 2) + len(active) * (H // G) * I * 2
        bytes_moved = weight_bytes + m * H * 2 + m * I * 2
        for i, t in enumerate(timed):
            mine = times[i]
            r = {"name": "moe_w8a16" if fp8 else "moe_w4a16", "variant": t, "tokens": tokens, "experts": E,
                 "top_k": args.top_k, "hidden": H, "intermediate": I, "group": G, "rows": m,
                 "active_experts": len(active), "max_rows_per_expert": int(counts.max().item()),
                 "ms": mine, "tflops": 2.0 * m * I * H / mine / 1e9, "gbps": bytes_moved / mine / 1e6,
                 "baseline": "loop of cublas f16 GEMMs over the experts (torch.matmul, dequantized weights)",
                 "baseline_ms": loop, "ratio": loop / mine,
                 "grouped_mm_ms": grouped, "ratio_grouped_mm": (grouped / mine) if grouped else None,
                 "routing_gather_ms": gather_ms, "routing_combine_ms": combine_ms,
                 "rel_err": rel_err[t], "rel_err_vs_baseline": lib_err[t], "passed": passed[t], **record}
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
            print("tokens %5d rows %6d experts %3d %-9s tessel %.4f ms %6.1f TFLOP/s %6.0f GB/s  cuBLAS loop"
                  " %.4f ms ratio %.2f%s  rel_err %.1e / %.1e%s" %
                  (tokens, m, len(active), t, mine, r["tflops"], r["gbps"], loop, r["ratio"],
                   ("  _grouped_mm(bf16) %.4f ms ratio %.2f" % (grouped, grouped / mine)) if grouped else "",
                   rel_err[t], lib_err[t], "" if passed[t] else "  FAILED"))
        print("tokens %5d routing outside the kernel: gather %.4f ms, weighted combine %.4f ms" %
              (tokens, gather_ms, combine_ms))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
