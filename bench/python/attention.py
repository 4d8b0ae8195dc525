#!/usr/bin/env python3
"""FlashAttention forward: tessel's examples/kernels/flash_attention*.tir against PyTorch's SDPA
backends (cuDNN, and FlashAttention-2 as torch builds it), in one process.

Q, K, V, O are torch tensors [B, H, L, D] (contiguous: the kernel's [B*H, L, D]), f16, entries
from torch.randn. The baselines run `F.scaled_dot_product_attention(q, k, v, is_causal=...)`
under `sdpa_kernel(SDPBackend.CUDNN_ATTENTION)` and `sdpa_kernel(SDPBackend.FLASH_ATTENTION)`;
a backend that refuses the shape is reported and skipped. Timing as tessel's C++ bench: a warm-up,
then all launched alternately, each launch between its own CUDA events; medians;
ratio = baseline time / tessel time. FLOPs: 4 B H L² D (half of that causal).
Check: O poisoned (NaN) before tessel's launch; sampled query rows (the first and last 64 and a
stride through the rest) of sampled heads against a float64 reference (rel_err), and all of O
against cuDNN's output.

A shape B,H,L,D,HKV runs grouped-query attention (K and V of HKV heads; the example
flash_attention_gqa.tir; the baselines get K and V repeated to H heads, as SDPA without
enable_gqa needs). --dtype bf16 runs the example with its f16 tensors as bf16.

D = 256 runs flash_attention{,_causal}_d256.tir (64-key tiles).

--varlen L1,L2,... H runs the variable-length kernels (flash_attention_varlen{,_causal}.tir,
D = 128) on one batch of sequences of those lengths and H heads, packed [T, H, D] with the
cumulative lengths on the device. Check: O poisoned; the first and last 64 rows and a stride of
every sequence (every 17th head) against float64. Baselines, as torch on the device offers them:
its variable-length FlashAttention-2 (`varlen_attn` of torch.nn.attention.varlen where it exists,
else torch.ops.aten._flash_attention_forward with cumulative lengths: the same kernel SDPA's
FLASH backend runs on nested tensors) on the same packed tensors, and cuDNN through SDPA on the
padded batch [B, H, max L, D] without a mask (the same FLOPs per sequence as the longest, more
than the varlen work: a bound, named cudnn_padded). FLOPs: 4 H D sum(L²) (half of that causal).

--triton adds a third baseline: bench/python/triton_attention.py, a Triton FlashAttention-2 after
the algorithm of Triton's tutorial (autotuned; L a multiple of 128), checked against the same
float64 rows.

--variants A.tir B.tir ...: more tessel kernels of the same signature, each checked as the kernel
is (O poisoned, float64 rows) and timed in the same interleaved loop, so that variants compare
within one process (their records name the kernel; ratios are to the same library timings).
--tuned (with --variants) adds tessel.Variants over the kernel and its variants, tuned at each
shape (Variants.tune records the fastest in the tuning cache; a call then launches it: the
dispatcher a user gets), timed in the same loop as "tuned:<choice>".

usage: attention.py [--shapes B,H,L,D[,HKV] ...] [--causal] [--dtype f16|bf16] [--json FILE]
                    [--iterations N] [--kernel FILE] [--varlen L1,L2,... H] [--triton]
                    [--variants FILE ...] [--tuned]
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import tessel
from bench_common import provenance, repository_root, time_interleaved


def reference_rows(q, k, v, heads, rows, causal):
    """float64 attention for query `rows` of flattened heads `heads`."""
    d = q.shape[-1]
    out = []
    for h in heads:
        qh = q[h, rows].double()
        s = qh @ k[h].double().t() / math.sqrt(d)
        if causal:
            cols = torch.arange(k.shape[1], device=q.device)
            s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
        out.append(torch.softmax(s, dim=-1) @ v[h].double())
    return torch.stack(out)


def sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def varlen_baselines(q, k, v, cu, max_len, causal):
    """The variable-length baselines torch offers on this device: (name, fn) pairs. varlen_attn
    took `is_causal` in torch 2.10 and takes `window_size` (-1, 0 for causal) since."""
    out = []
    try:
        from torch.nn.attention.varlen import varlen_attn
        for kw in ({"window_size": (-1, 0) if causal else (-1, -1)}, {"is_causal": causal}):
            try:
                fn = lambda kw=kw: varlen_attn(q, k, v, cu, cu, max_len, max_len, **kw)
                fn()
                out.append(("varlen_attn", fn))
                break
            except TypeError:
                continue
    except (ImportError, RuntimeError) as e:
        print("varlen_attn unavailable (%s)" % (str(e).splitlines() or [type(e).__name__])[0])
    if not out:
        try:
            fa = torch.ops.aten._flash_attention_forward
            fn = lambda: fa(q, k, v, cu, cu, max_len, max_len, 0.0, causal, False)[0]
            fn()
            out.append(("flash_varlen", fn))
        except (AttributeError, RuntimeError, TypeError) as e:
            print("aten._flash_attention_forward unavailable (%s)"
                  % (str(e).splitlines() or [type(e).__name__])[0])
    return out


def run_varlen(args, root, record, dtype):
    lengths = [int(x) for x in args.varlen[0].split(",")]
    h = int(args.varlen[1])
    d = 128
    path = args.kernel or os.path.join(
        root, "examples/kernels/flash_attention_varlen%s.tir" % ("_causal" if args.causal else ""))
    text = open(path).read()
    if args.dtype == "bf16":
        text = text.replace("<f16>", "<bf16>").replace("<f16,", "<bf16,")
    kernel = tessel.compile(text, file=path)
    total = sum(lengths)
    torch.manual_seed(total + h)
    q, k, v = (torch.randn(total, h, d, device="cuda", dtype=dtype) for _ in range(3))
    cu = torch.zeros(len(lengths) + 1, dtype=torch.int32, device="cuda")
    cu[1:] = torch.cumsum(torch.tensor(lengths, device="cuda"), 0).to(torch.int32)
    ends = cu[1:].clone()  # every tensor argument is 16-byte aligned: cu[1:] is 4 bytes off
    o = torch.full_like(q, float("nan"))
    kernel(q, k, v, o, ends)
    torch.cuda.synchronize()
    # Every sequence against float64 on sampled rows and heads.
    err = norm = 0.0
    for b, l in enumerate(lengths):
        if l == 0:
            continue
        first = int(cu[b])
        rows = torch.tensor(sorted({r for r in range(l) if r < 64 or r >= l - 64 or r % 97 == 0}),
                            device="cuda")
        for head in range(0, h, 17):
            qs, ks, vs = (t[first:first + l, head].double() for t in (q, k, v))
            s = qs[rows] @ ks.t() / math.sqrt(d)
            if args.causal:
                cols = torch.arange(l, device="cuda")
                s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
            want = torch.softmax(s, dim=-1) @ vs
            got = o[first:first + l, head][rows].double()
            err += torch.linalg.norm(got - want).item() ** 2
            norm += torch.linalg.norm(want).item() ** 2
    rel_err = math.sqrt(err / norm)
    finite = bool(torch.isfinite(o).all().item())
    tol = 1.5e-2 if args.dtype == "bf16" else 2e-3
    passed = finite and rel_err <= tol
    max_len = max(lengths)
    fns = [lambda: kernel(q, k, v, torch.empty_like(q), ends)]
    names = []
    for name, fn in varlen_baselines(q, k, v, cu, max_len, args.causal):
        ref = fn()
        torch.cuda.synchronize()
        lib_err = (torch.linalg.norm(o.double() - ref.double()) / torch.linalg.norm(ref.double())).item()
        print("%s: rel. difference from tessel's output %.2e" % (name, lib_err))
        passed = passed and lib_err <= 2 * tol
        names.append(name)
        fns.append(fn)
    padded = [torch.randn(len(lengths), h, max_len, d, device="cuda", dtype=dtype) for _ in range(3)]
    try:
        sdpa(SDPBackend.CUDNN_ATTENTION, *padded, args.causal)
        names.append("cudnn_padded")
        fns.append(lambda: sdpa(SDPBackend.CUDNN_ATTENTION, *padded, args.causal))
    except RuntimeError as e:
        print("cudnn refuses the padded batch (%s)" % str(e).splitlines()[0])
    times = time_interleaved(fns, 5, args.iterations)
    flops = 4.0 * h * d * sum(l * l for l in lengths) / (2 if args.causal else 1)
    mine = times[0]
    shape = "varlen %s H=%d" % (args.varlen[0], h)
    line = "%-28s %s tessel %.3f ms %6.1f TFLOP/s" % (shape, "causal" if args.causal else "      ",
                                                     mine, flops / mine / 1e9)
    for name, t in zip(names, times[1:]):
        line += "  %s %.3f ms (ratio %.3f)" % (name, t, t / mine)
    line += "  rel_err %.2e%s" % (rel_err, "" if passed else "  FAILED")
    print(line, flush=True)
    if args.json:
        r = {"name": os.path.basename(path)[:-4], "dtype": args.dtype, "shape": shape,
             "lengths": lengths, "heads": h, "causal": args.causal, "ms": mine,
             "tflops": flops / mine / 1e9, "rel_err": rel_err, "passed": passed, **record}
        for name, t in zip(names, times[1:]):
            r[name + "_ms"] = t
            r[name + "_ratio"] = t / mine
        with open(args.json, "a") as f:
            f.write(json.dumps(r) + "\n")
    return 0 if passed else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", nargs="+", default=["4,32,1024,128", "4,32,4096,128", "4,32,16384,128"])
    p.add_argument("--causal", action="store_true")
    p.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    p.add_argument("--kernel", default=None, help="a .tir file (default: the example for D)")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--varlen", nargs=2, metavar=("L1,L2,...", "H"))
    p.add_argument("--variants", nargs="+", default=[],
                   help="more .tir files timed in the same loop (not with --varlen)")
    p.add_argument("--tuned", action="store_true",
                   help="also time tessel.Variants over the kernel and --variants, tuned per shape")
    p.add_argument("--triton", action="store_true",
                   help="also time bench/python/triton_attention.py (a Triton FA2 after the tutorial)")
    args = p.parse_args()
    root = repository_root()
    record = provenance("attention.py")
    kernels = {}
    failures = 0
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    if args.varlen:
        return run_varlen(args, root, record, dtype)
    for shape in args.shapes:
        b, h, l, d, *rest = (int(x) for x in shape.split(","))
        hkv = rest[0] if rest else h
        path = args.kernel or os.path.join(
            root, "examples/kernels/flash_attention%s%s%s.tir" % (
                "_causal" if args.causal else "", "_gqa" if rest else "",
                "" if d == 128 else "_d%d" % d))
        for f in [path] + args.variants:
            if f not in kernels:
                text = open(f).read()
                if args.dtype == "bf16":
                    text = text.replace("<f16>", "<bf16>").replace("<f16,", "<bf16,")
                kernels[f] = tessel.compile(text, file=f)
        kernel = kernels[path]
        torch.manual_seed(b * 7 + h * 13 + l + d)
        q = torch.randn(b, h, l, d, device="cuda", dtype=dtype)
        k, v = (torch.randn(b, hkv, l, d, device="cuda", dtype=dtype) for _ in range(2))
        o = torch.full_like(q, float("nan"))
        flat = lambda t: t.reshape(-1, l, d)
        kernel(flat(q), flat(k), flat(v), flat(o))
        torch.cuda.synchronize()
        if hkv != h:  # the baselines' and the reference's K and V: each head's own copy
            k = k.repeat_interleave(h // hkv, dim=1)
            v = v.repeat_interleave(h // hkv, dim=1)
        rows = torch.tensor(sorted({r for r in range(l) if r < 64 or r >= l - 64 or r % 97 == 0}),
                            device="cuda")
        heads = sorted({0, b * h - 1, (b * h) // 2})
        want = reference_rows(flat(q), flat(k), flat(v), heads, rows, args.causal)

        def rows_error(out_tensor):
            """The sampled rows' error against float64, and whether every output is finite."""
            got = flat(out_tensor)[heads][:, rows].double()
            return ((torch.linalg.norm(got - want) / torch.linalg.norm(want)).item(),
                    bool(torch.isfinite(out_tensor).all().item()))
        rel_err, finite = rows_error(o)
        baselines = []
        candidates = [(name, lambda backend=backend: sdpa(backend, q, k, v, args.causal))
                      for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                                            ("flash", SDPBackend.FLASH_ATTENTION))]
        if args.triton:
            from triton_attention import triton_attention
            candidates.append(("triton", lambda: triton_attention(q, k, v, args.causal)))
        for name, fn in candidates:
            try:
                ref = fn()
                torch.cuda.synchronize()
                baselines.append((name, fn, ref))
            except RuntimeError as e:
                print("%-16s %s refuses the shape (%s)" % (shape, name, str(e).splitlines()[0]))
        lib_err = None
        if baselines:
            ref = baselines[0][2].double()
            lib_err = (torch.linalg.norm(o.double() - ref) / torch.linalg.norm(ref)).item()
        tol = 1.5e-2 if args.dtype == "bf16" else 2e-3
        passed = finite and rel_err <= tol and (lib_err is None or lib_err <= 2 * tol)
        failures += not passed
        out = torch.empty_like(q)
        kk, vv = ((flat(t[:, ::h // hkv].contiguous()) for t in (k, v)) if hkv != h
                  else (flat(k), flat(v)))
        fns = [lambda: kernel(flat(q), kk, vv, flat(out))]
        variant_errs = []  # each variant checked as the kernel is: O poisoned, float64 rows
        for f in args.variants:
            ov = torch.full_like(q, float("nan"))
            kernels[f](flat(q), kk, vv, flat(ov))
            torch.cuda.synchronize()
            err_v, finite_v = rows_error(ov)
            ok_v = finite_v and err_v <= tol
            failures += not ok_v
            variant_errs.append((err_v, ok_v))
            fns.append(lambda kv=kernels[f]: kv(flat(q), kk, vv, flat(out)))
        timed_variants = list(args.variants)
        if args.tuned and args.variants:  # the measured dispatcher: tune at this shape, call as one
            names = [os.path.basename(f)[:-4] for f in [path] + args.variants]
            key = (path,) + tuple(args.variants)
            if key not in kernels:
                kernels[key] = tessel.Variants([kernels[f] for f in [path] + args.variants], names=names)
            dispatch = kernels[key]
            dispatch.tune(flat(q), kk, vv, flat(out), warmup=3, iterations=20, progress=False)
            choice = dispatch.choose(flat(q), kk, vv, flat(out))
            timed_variants.append("tuned:" + choice)
            at = names.index(choice)
            variant_errs.append((rel_err, passed) if at == 0 else variant_errs[at - 1])
            fns.append(lambda: dispatch(flat(q), kk, vv, flat(out)))
        err_t = None
        for name, fn, ref in baselines:
            if name == "triton":  # its own check: against float64 on the sampled rows
                err_t = rows_error(ref)[0]
                print("%-16s triton rel_err %.2e" % (shape, err_t))
            fns.append(fn)
        times = time_interleaved(fns, 5, args.iterations)
        nv = len(timed_variants)
        variant_times = times[1:1 + nv]
        times = times[:1] + times[1 + nv:]
        flops = 4.0 * b * h * l * l * d / (2 if args.causal else 1)
        mine = times[0]
        line = "%-16s %s tessel %.3f ms %6.1f TFLOP/s" % (shape, "causal" if args.causal else "      ",
                                                         mine, flops / mine / 1e9)
        for (name, _, _), t in zip(baselines, times[1:]):
            line += "  %s %.3f ms %6.1f (ratio %.3f)" % (name, t, flops / t / 1e9, t / mine)
        line += "  rel_err %.2e vs_lib %s%s" % (rel_err, "%.2e" % lib_err if lib_err is not None else "-",
                                               "" if passed else "  FAILED")
        print(line, flush=True)
        if args.json:
            r = {"name": os.path.basename(path)[:-4], "dtype": args.dtype, "shape": shape,
                 "causal": args.causal, "ms": mine, "tflops": flops / mine / 1e9,
                 "rel_err": rel_err, "rel_err_vs_baseline": lib_err, "passed": passed,
                 **({"triton_rel_err": err_t} if err_t is not None else {}),
                 **record}
            for (name, _, _), t in zip(baselines, times[1:]):
                r[name + "_ms"] = t
                r[name + "_tflops"] = flops / t / 1e9
                r[name + "_ratio"] = t / mine
            with open(args.json, "a") as f:
                f.write(json.dumps(r) + "\n")
        for f, t, (err_v, ok_v) in zip(timed_variants, variant_times, variant_errs):
            vname = f if f.startswith("tuned:") else os.path.basename(f)[:-4]
            line = "%-16s %s %-28s %.3f ms %6.1f TFLOP/s" % (
                shape, "causal" if args.causal else "      ", vname[:34], t, flops / t / 1e9)
            for (name, _, _), tb in zip(baselines, times[1:]):
                line += "  %s ratio %.3f" % (name, tb / t)
            print(line + "  rel_err %.2e%s" % (err_v, "" if ok_v else "  FAILED"), flush=True)
            if args.json:
                r = {"name": vname, "dtype": args.dtype, "shape": shape,
                     "causal": args.causal, "ms": t, "tflops": flops / t / 1e9, "rel_err": err_v,
                     "passed": ok_v, "timed_beside": os.path.basename(path)[:-4], **record}
                for (name, _, _), tb in zip(baselines, times[1:]):
                    r[name + "_ms"] = tb
                    r[name + "_ratio"] = tb / t
                with open(args.json, "a") as fj:
                    fj.write(json.dumps(r) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
