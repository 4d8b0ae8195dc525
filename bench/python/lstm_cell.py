#!/usr/bin/env python3
"""LSTM cell (Graphene §6): tessel's fused examples/kernels/lstm_cell.tir against cuBLAS + PyTorch's
elementwise kernels, in one process.

  gates = x W_ih^T + h W_hh^T + b,  i, f, g, o = gates.chunk(4, 1)
  c' = sigmoid(f) c + sigmoid(i) tanh(g),  h' = sigmoid(o) tanh(c')

x [B,I], h and c [B,H], W_ih [4H,I], W_hh [4H,H], b [4H] (bias_ih + bias_hh, summed once as the
weights are), f16 everywhere. tessel runs the whole cell as one kernel (both GEMMs into four gate
accumulators, the nonlinearities and the state update in the epilogue); it takes W_ih, W_hh and b
viewed as [4,H,I], [4,H,H] and [4,H] (the same memory).

Baselines, each timed interleaved with tessel launch by launch on the same tensors:
  unfused    the cell as written by hand in PyTorch: two cuBLAS GEMMs (torch.addmm, the bias folded
             into the first one's C input, the second accumulating onto it), then torch.sigmoid x3,
             torch.tanh x2 on the gate chunks and the mul/add sequence of the state update
             (10 elementwise kernels);
  unfused-graph  the same sequence replayed from a CUDA graph (no host launch gaps: GPU time only);
  aten       torch._VF.lstm_cell (PyTorch's own LSTMCell: the same two GEMMs, then one fused
             elementwise kernel), when it runs.
ratio = baseline time / tessel time (medians of per-launch CUDA events).
Check: c' and h' poisoned (NaN) before tessel's launch; rows 0..63, the last 64 and every 61st
against a float64 reference (rel_err = ||got - ref|| / ||ref|| over those rows, c' and h' together),
and all of c' and h' against the unfused PyTorch result.

usage: lstm_cell.py [--shapes BxIxH,...] [--json FILE] [--iterations N]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

import torch

import tessel


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else 0.5 * (xs[len(xs) // 2 - 1] + xs[len(xs) // 2])


def time_interleaved(fns, warmup, iterations):
    for _ in range(warmup):
        for f in fns:
            f()
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(iterations)] for _ in fns]
    for i in range(iterations):
        for f, ev in zip(fns, events):
            ev[i][0].record()
            f()
            ev[i][1].record()
    torch.cuda.synchronize()
    return [median([a.elapsed_time(b) for a, b in ev]) for ev in events]


def unfused(x, h, c, w_ih, w_hh, b):
    gates = torch.addmm(b, x, w_ih.t())
    gates = torch.addmm(gates, h, w_hh.t())
    i, f, g, o = gates.chunk(4, 1)
    i = torch.sigmoid(i)
    f = torch.sigmoid(f)
    g = torch.tanh(g)
    o = torch.sigmoid(o)
    c1 = f * c + i * g
    h1 = o * torch.tanh(c1)
    return h1, c1


def graphed(fn, *args):
    """fn(*args) captured into a CUDA graph; returns replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(*args)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn(*args)
    return g.replay


def reference(x, h, c, w_ih, w_hh, b, rows):
    r = torch.tensor(rows, device="cuda")
    gates = (x[r].double() @ w_ih.double().t() + h[r].double() @ w_hh.double().t() + b.double())
    i, f, g, o = gates.chunk(4, 1)
    c1 = torch.sigmoid(f) * c[r].double() + torch.sigmoid(i) * torch.tanh(g)
    h1 = torch.sigmoid(o) * torch.tanh(c1)
    return h1, c1


def rel(got, want):
    return (torch.linalg.norm(got.double() - want) / torch.linalg.norm(want)).item()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="100x72x1000,333x520x136,"
                   "64x1024x1024,256x1024x1024,1024x1024x1024,4096x1024x1024,"
                   "64x4096x4096,1024x4096x4096,4096x4096x4096,64x8192x8192,4096x8192x8192")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=30)
    args = p.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    kernel = tessel.compile_file(os.path.join(root, "examples/kernels/lstm_cell.tir"))
    device = torch.cuda.get_device_name()
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = ""
    command = "python3 bench/python/lstm_cell.py " + " ".join(sys.argv[1:])
    failures = 0
    rows_out = []
    for shape in args.shapes.split(","):
        B, I, H = (int(v) for v in shape.split("x"))
        torch.manual_seed(B * 7 + I * 13 + H)
        f16 = dict(device="cuda", dtype=torch.float16)
        x = torch.randn(B, I, **f16)
        h = torch.randn(B, H, **f16)
        c = torch.randn(B, H, **f16)
        w_ih = torch.randn(4 * H, I, **f16) / I ** 0.5
        w_hh = torch.randn(4 * H, H, **f16) / H ** 0.5
        b = torch.randn(4 * H, **f16) * 0.5
        wx, wh, b4 = w_ih.view(4, H, I), w_hh.view(4, H, H), b.view(4, H)
        c_out = torch.full((B, H), float("nan"), **f16)
        h_out = torch.full((B, H), float("nan"), **f16)
        kernel(x, h, c, wx, wh, b4, c_out, h_out)
        torch.cuda.synchronize()
        rows = sorted({r for r in range(B) if r < 64 or r >= B - 64 or r % 61 == 0})
        h_ref, c_ref = reference(x, h, c, w_ih, w_hh, b, rows)
        r = torch.tensor(rows, device="cuda")
        got = torch.cat([c_out[r], h_out[r]], 1)
        rel_err = rel(got, torch.cat([c_ref, h_ref], 1))
        h_t, c_t = unfused(x, h, c, w_ih, w_hh, b)
        torch_err = rel(torch.cat([c_out, h_out], 1), torch.cat([c_t, h_t], 1).double())
        torch_ref_err = rel(torch.cat([c_t[r], h_t[r]], 1), torch.cat([c_ref, h_ref], 1))
        passed = rel_err <= 2e-3 and torch_err <= 4e-3
        failures += not passed

        co, ho = torch.empty_like(c), torch.empty_like(h)
        zero_b = torch.zeros_like(b)
        fns = {"tessel": lambda: kernel(x, h, c, wx, wh, b4, co, ho),
               "unfused": lambda: unfused(x, h, c, w_ih, w_hh, b),
               "unfused-graph": graphed(unfused, x, h, c, w_ih, w_hh, b)}
        try:
            torch._VF.lstm_cell(x, (h, c), w_ih, w_hh, b, zero_b)
            fns["aten"] = lambda: torch._VF.lstm_cell(x, (h, c), w_ih, w_hh, b, zero_b)
        except (RuntimeError, AttributeError) as e:
            print("torch._VF.lstm_cell does not run (%s)" % str(e).splitlines()[0])
        times = dict(zip(fns, time_interleaved(list(fns.values()), 5, args.iterations)))
        flops = 2.0 * B * 4 * H * (I + H)
        rec = {"name": "lstm_cell", "dtype": "f16", "shape": shape, "B": B, "I": I, "H": H,
               "ms": times["tessel"], "tflops": flops / times["tessel"] / 1e9,
               "baselines": {k: v for k, v in times.items() if k != "tessel"},
               "ratio": {k: v / times["tessel"] for k, v in times.items() if k != "tessel"},
               "rel_err": rel_err, "rel_err_vs_torch": torch_err,
               "torch_rel_err": torch_ref_err, "passed": passed,
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "device": device, "commit": commit, "command": command}
        rows_out.append(rec)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
        print("%-16s tessel %.4f ms (%.0f TFLOP/s) | %s | rel_err %.1e (torch's %.1e) vs torch %.1e%s"
              % (shape, times["tessel"], rec["tflops"],
                 "  ".join("%s %.4f ms x%.2f" % (k, v, v / times["tessel"])
                           for k, v in times.items() if k != "tessel"),
                 rel_err, torch_ref_err, torch_err, "" if passed else "  FAILED"), flush=True)
    print("\n| B x I x H | tessel ms | TFLOP/s | unfused ms | ratio | unfused-graph ms | ratio | "
          "aten lstm_cell ms | ratio | rel_err | ok |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for rec in rows_out:
        bl, ra = rec["baselines"], rec["ratio"]
        aten = ("%.4f | %.2f" % (bl["aten"], ra["aten"])) if "aten" in bl else "- | -"
        print("| %s | %.4f | %.0f | %.4f | %.2f | %.4f | %.2f | %s | %.1e | %s |"
              % (rec["shape"], rec["ms"], rec["tflops"], bl["unfused"], ra["unfused"],
                 bl["unfused-graph"], ra["unfused-graph"], aten, rec["rel_err"],
                 "ok" if rec["passed"] else "FAIL"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
