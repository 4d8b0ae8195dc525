#!/usr/bin/env python3
"""Flash-decoding: tessel's examples/kernels/flash_decode.tir (split-KV) + flash_decode_combine.tir
against the HBM bandwidth the KV cache read implies and against PyTorch's SDPA, in one process.

One query row per head: q [B, H, D] (the kernel's [B*HK, G, D], G = H / HK query heads per KV
head; HK divides H, G <= 64: one 64-row tile per KV head), K and V caches [B, HK, L, D] (the
kernel's [B*HK, L, D]), D = 128, f16, entries from torch.randn. The split kernel writes f32
partials [B*HK, G, NS, D] and LSEs [B*HK, G, NS]; the combine writes O [B, H, D] (f16). NS is chosen here (choose_splits: per SM, ceil(units / SMs)
units of (tiles per split + 1) tiles' time, over the counts that leave no split empty) and
passed as the partials' extent; the kernels use cdiv(tiles, cdiv(tiles, NS)) splits.

Timing as tessel's C++ bench (bench_common.time_interleaved): the pair of launches (split, then
combine) is one timed function, between CUDA events; medians. Bandwidth: the bytes the KV cache
read implies, 2 B HK L D 2, over the pair's time; against (a) a device-to-device copy timed in
the same loop (dst.copy_(src), a tensor of the KV cache's bytes, at most --copy-cap GiB;
its bandwidth counts read + write), the achievable figure, and (b) the H100's nominal 3.35 TB/s.
Baselines: F.scaled_dot_product_attention(q[B,H,1,D], k, v, enable_gqa=HK != H) under the
FLASH_ATTENTION, CUDNN_ATTENTION and EFFICIENT_ATTENTION backends (a backend that refuses the
shape is reported and skipped); ratio = baseline time / tessel time. --profile also reads each
kernel's device time from torch.profiler (CUPTI), without the launch gaps. Every function is also
timed replayed from a CUDA graph of --graph-reps calls (the time per call): without Python's and
the launches' overhead, which dominate the eager figure at the small shapes.
Check: partials, LSEs and O poisoned (NaN) before the launches; O finite everywhere; sampled heads
against a float64 reference (rel_err), and all of O against the first baseline that runs.

usage: decode.py [--shapes B,H,HK,L ...] [--json FILE] [--iterations N] [--profile]
                 [--graph-reps N] [--copy-cap GIB]
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

NOMINAL_GBPS = 3350.0
D = 128
DEFAULT_SHAPES = ["%d,32,%d,%d" % (b, hk, l) for b in (1, 8, 32) for hk in (8, 32)
                  for l in (4096, 32768, 131072)]


def choose_splits(kv_heads, length, sms):
    tiles = -(-length // 128)
    best, best_cost = 1, None
    for ns in range(1, tiles + 1):
        per = -(-tiles // ns)
        if -(-tiles // per) != ns:
            continue
        cost = -(-kv_heads * ns // sms) * (per + 1)
        if best_cost is None or cost < best_cost:
            best, best_cost = ns, cost
    return best


def reference_heads(q, k, v, heads, group):
    """float64 decode for flattened query heads `heads` (q [BH, D], k, v [BHK, L, D])."""
    out = []
    for h in heads:
        kv = h // group
        s = k[kv].double() @ q[h].double() / math.sqrt(q.shape[-1])
        out.append(torch.softmax(s, dim=0) @ v[kv].double())
    return torch.stack(out)


def sdpa(backend, q, k, v, gqa):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)


def graphed(fn, reps):
    """A function replaying a CUDA graph of `reps` calls of fn, or None if fn cannot be captured."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(reps):
                fn()
        g.replay()
        torch.cuda.synchronize()
        return g.replay
    except Exception as e:  # noqa: BLE001 -- reported by the caller
        print("graph capture failed: %s" % str(e).splitlines()[0][:120])
        torch.cuda.synchronize()
        return None


def profile_kernels(fn, iterations):
    """Median device time (ms) of each kernel `fn` launches, by name, from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iterations):
            fn()
        torch.cuda.synchronize()
    times = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            times.setdefault(e.name, []).append(e.device_time / 1000.0)
    return {name: sorted(ts)[len(ts) // 2] for name, ts in times.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", nargs="+", default=DEFAULT_SHAPES)
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--copy-cap", type=float, default=8.0, help="GiB")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--graph-reps", type=int, default=20,
                   help="calls per CUDA graph for the graph timing (a tenth of it where a call takes 0.5 ms or more; 0: none)")
    args = p.parse_args()
    root = repository_root()
    record = provenance("decode.py")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    split = tessel.compile_file(os.path.join(root, "examples/kernels/flash_decode.tir"))
    combine = tessel.compile_file(os.path.join(root, "examples/kernels/flash_decode_combine.tir"))
    failures = 0
    for shape in args.shapes:
        b, h, hk, l = (int(x) for x in shape.split(","))
        g, bhk, bh = h // hk, b * hk, b * h
        if h % hk or g > 64:
            print("%-18s skipped: flash_decode.tir takes G = H / HK whole and at most 64" % shape)
            continue
        kv_bytes = 2 * b * hk * l * D * 2
        ns = choose_splits(bhk, l, sms)
        torch.cuda.empty_cache()
        try:
            torch.manual_seed(b * 7 + h * 13 + hk * 5 + l)
            q = torch.randn(b, h, D, device="cuda", dtype=torch.float16)
            k = torch.randn(b, hk, l, D, device="cuda", dtype=torch.float16)
            v = torch.randn(b, hk, l, D, device="cuda", dtype=torch.float16)
        except torch.cuda.OutOfMemoryError:
            print("%-18s skipped: the KV cache (%.1f GB) does not fit" % (shape, kv_bytes / 1e9))
            continue
        op = torch.full((bhk, g, ns, D), float("nan"), device="cuda", dtype=torch.float32)
        lse = torch.full((bhk, g, ns), float("nan"), device="cuda", dtype=torch.float32)
        o = torch.full((b, h, D), float("nan"), device="cuda", dtype=torch.float16)
        qf, kf, vf = q.view(bhk, g, D), k.view(bhk, l, D), v.view(bhk, l, D)

        op3, lse2 = op.view(bh, ns, D), lse.view(bh, ns)

        def run(o=o):
            split(qf, kf, vf, op, lse)
            combine(op3, lse2, o.view(bh, D), l)

        run()
        torch.cuda.synchronize()
        finite = bool(torch.isfinite(o).all().item())
        heads = sorted({0, 1, bh - 1, bh // 2, (bh // 3) | 1})
        want = reference_heads(q.view(bh, D), kf, vf, heads, g)
        got = o.view(bh, D)[heads].double()
        rel_err = (torch.linalg.norm(got - want) / torch.linalg.norm(want)).item()
        q4 = q.view(b, h, 1, D)
        baselines = []
        for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                              ("cudnn", SDPBackend.CUDNN_ATTENTION),
                              ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
            try:
                ref = sdpa(backend, q4, k, v, hk != h)
                torch.cuda.synchronize()
                baselines.append((name, backend, ref))
            except RuntimeError as e:
                print("%-18s %s refuses the shape (%s)" % (shape, name, str(e).splitlines()[0][:100]))
        lib_err = None
        if baselines:
            ref = baselines[0][2].view(b, h, D).double()
            lib_err = (torch.linalg.norm(o.double() - ref) / torch.linalg.norm(ref)).item()
            baselines = [(n, bk) for n, bk, _ in baselines]
        passed = finite and rel_err <= 2e-3 and (lib_err is None or lib_err <= 4e-3)
        failures += not passed
        copy_elems = min(kv_bytes, int(args.copy_cap * 2**30)) // 2
        try:
            src = torch.randn(copy_elems, device="cuda", dtype=torch.float16)
            dst = torch.empty_like(src)
        except torch.cuda.OutOfMemoryError:
            src = dst = None
        out = torch.empty_like(o)
        fns = [lambda: run(out)]
        if src is not None:
            fns.append(lambda: dst.copy_(src))
        for name, backend in baselines:
            fns.append(lambda backend=backend: sdpa(backend, q4, k, v, hk != h))
        times = time_interleaved(fns, 5, args.iterations)
        # The same functions replayed from CUDA graphs of --graph-reps calls each: no Python and
        # launch overhead between calls, what a serving loop that captures its decode step sees.
        graph_times = {}
        reps = args.graph_reps if times[0] < 0.5 else max(2, args.graph_reps // 10)
        if reps > 0:
            names = ["tessel"] + (["copy"] if src is not None else []) + [n for n, _ in baselines]
            replays, kept = [], []
            for name, fn in zip(names, fns):
                g = graphed(fn, reps)
                if g is None:
                    print("%-18s %s does not run in a CUDA graph" % (shape, name))
                else:
                    replays.append(g)
                    kept.append(name)
            if replays:
                for name, t in zip(kept, time_interleaved(replays, 2, max(5, args.iterations // 3))):
                    graph_times[name] = t / reps
        mine = times[0]
        gbps = kv_bytes / mine / 1e6
        copy_gbps = 2 * copy_elems * 2 / times[1] / 1e6 if src is not None else None
        line = "%-18s NS=%-3d tessel %.4f ms %7.1f GB/s (%.3f of copy %s, %.3f of 3.35 TB/s)" % (
            shape, ns, mine, gbps, gbps / copy_gbps if copy_gbps else float("nan"),
            "%.0f GB/s" % copy_gbps if copy_gbps else "-", gbps / NOMINAL_GBPS)
        base_times = times[2:] if src is not None else times[1:]
        for (name, _), t in zip(baselines, base_times):
            line += "  %s %.4f ms (ratio %.2f)" % (name, t, t / mine)
        if "tessel" in graph_times:
            gt = graph_times["tessel"]
            gc = graph_times.get("copy")
            line += "  | graph: tessel %.4f ms %7.1f GB/s" % (gt, kv_bytes / gt / 1e6)
            if gc:
                line += " (%.3f of copy %.0f GB/s)" % (kv_bytes / gt / (2 * copy_elems * 2 / gc),
                                                       2 * copy_elems * 2 / gc / 1e6)
            for name, _ in baselines:
                if name in graph_times:
                    line += "  %s ratio %.2f" % (name, graph_times[name] / gt)
        prof = {}
        if args.profile:
            try:
                prof = profile_kernels(lambda: run(out), 10)
                dev = sum(t for n, t in prof.items() if n.startswith("flash_decode"))
                line += "  device-only %.4f ms %7.1f GB/s" % (dev, kv_bytes / dev / 1e6)
            except Exception as e:  # the profiler is an extra; never fail the bench for it
                print("profile failed: %s" % e)
        line += "  rel_err %.2e vs_lib %s%s" % (rel_err, "%.2e" % lib_err if lib_err is not None else "-",
                                               "" if passed else "  FAILED")
        print(line, flush=True)
        if args.json:
            r = {"name": "flash_decode", "dtype": "f16", "shape": shape, "B": b, "H": h, "HK": hk,
                 "L": l, "D": D, "splits": ns, "ms": mine, "kv_bytes": kv_bytes, "gbps": gbps,
                 "copy_bytes": 2 * copy_elems * 2 if src is not None else None,
                 "copy_gbps": copy_gbps,
                 "fraction_of_copy": gbps / copy_gbps if copy_gbps else None,
                 "fraction_of_nominal": gbps / NOMINAL_GBPS, "rel_err": rel_err,
                 "rel_err_vs_baseline": lib_err, "passed": passed, **record}
            for (name, _), t in zip(baselines, base_times):
                r[name + "_ms"] = t
                r[name + "_ratio"] = t / mine
            if prof:
                r["device_ms"] = {n: t for n, t in prof.items()}
            if graph_times:
                r["graph_ms"] = graph_times
                gt = graph_times.get("tessel")
                if gt:
                    r["graph_gbps"] = kv_bytes / gt / 1e6
                    if graph_times.get("copy"):
                        r["graph_copy_gbps"] = 2 * copy_elems * 2 / graph_times["copy"] / 1e6
                        r["graph_fraction_of_copy"] = r["graph_gbps"] / r["graph_copy_gbps"]
                    r["graph_fraction_of_nominal"] = r["graph_gbps"] / NOMINAL_GBPS
            with open(args.json, "a") as f:
                f.write(json.dumps(r) + "\n")
        del q, k, v, op, lse, o, out, src, dst, fns
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
