#!/usr/bin/env python3
"""LSTM cell (Graphene §6): tessel's fused examples/kernels/lstm_cell.tir against cuBLAS + PyTorch's
elementwise kernels, in one process.

  gates = x W_ih^T + h W_hh^T + b,  i, f, g, o = gates.chunk(4, 1)
  c' = sigmoid(f) c + sigmoid(i) tanh(g),  h' = sigmoid(o) tanh(c')

x [B,I], h and c [B,H], W_ih [4H,I], W_hh [4H,H], b [4H] (bias_ih + bias_hh, summed once as the
weights are), f16 everywhere. tessel runs the whole cell as one kernel, two of them:
  tessel       examples/kernels/lstm_cell.tir: both GEMMs into four [128,64] gate accumulators, the
               nonlinearities and the state update in the epilogue; W_ih, W_hh and b viewed as
               [4,H,I], [4,H,H] and [4,H] (the same memory);
  tessel-il    examples/kernels/lstm_cell_interleaved.tir: one [128,256] accumulator holding the four
               gates of 64 state columns, the weights and bias permuted once (gate-interleaved by
               blocks of 64 rows, [H/64,256,K]; not timed, as the weights are static); H % 64 == 0.

Baselines, each timed interleaved with tessel launch by launch on the same tensors:
  unfused    the cell as written by hand in PyTorch: two cuBLAS GEMMs (torch.addmm, the bias folded
             into the first one's C input, the second accumulating onto it), then torch.sigmoid x3,
             torch.tanh x2 on the gate chunks and the mul/add sequence of the state update
             (10 elementwise kernels);
  unfused-graph  the same sequence replayed from a CUDA graph (no host launch gaps: GPU time only);
  aten       torch._VF.lstm_cell (PyTorch's own LSTMCell: the same two GEMMs, then one fused
             elementwise kernel), when it runs.
ratio = baseline time / the faster tessel kernel's time (medians of per-launch CUDA events).
Check: c' and h' poisoned (NaN) before tessel's launch; rows 0..63, the last 64 and every 61st
against a float64 reference (rel_err = ||got - ref|| / ||ref|| over those rows, c' and h' together),
and all of c' and h' against the unfused PyTorch result.

usage: lstm_cell.py [--shapes BxIxH,...] [--json FILE] [--iterations N]
"""
import argparse
import json
import os
import sys

import torch

import tessel
from bench_common import graphed, provenance, repository_root, time_interleaved


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
                   "300x200x192,64x1024x1024,256x1024x1024,1024x1024x1024,4096x1024x1024,"
                   "64x4096x4096,1024x4096x4096,4096x4096x4096,64x8192x8192,4096x8192x8192")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--variants", nargs="*", default=[],
                   help="more .tir files with lstm_cell_interleaved.tir's parameters, checked and "
                        "timed beside it (.lowered.tir: lowered IR, compiled with verify only)")
    args = p.parse_args()
    root = repository_root()
    kernel = tessel.compile_file(os.path.join(root, "examples/kernels/lstm_cell.tir"))
    kernel_il = tessel.compile_file(os.path.join(root, "examples/kernels/lstm_cell_interleaved.tir"))
    variants = {"tessel-il:" + os.path.basename(path)[:-4]: tessel.compile_file(
        path, passes=["verify"] if path.endswith(".lowered.tir") else ()) for path in args.variants}
    record = provenance("lstm_cell.py")
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
        rows = sorted({r for r in range(B) if r < 64 or r >= B - 64 or r % 61 == 0})
        h_ref, c_ref = reference(x, h, c, w_ih, w_hh, b, rows)
        r = torch.tensor(rows, device="cuda")
        h_t, c_t = unfused(x, h, c, w_ih, w_hh, b)
        torch_ref_err = rel(torch.cat([c_t[r], h_t[r]], 1), torch.cat([c_ref, h_ref], 1))
        interleaved = H % 64 == 0
        if interleaved:
            T = H // 64
            def il(w):  # [4H, K] -> [T, 256, K]: row 64 q + r of block t is gate q's row 64 t + r
                return w.view(4, T, 64, -1).permute(1, 0, 2, 3).contiguous().view(T, 256, -1)
            wx_il, wh_il, b_il = il(w_ih), il(w_hh), il(b.view(4 * H, 1)).view(T, 256)
        checks = {}
        il_kernels = {"tessel-il": kernel_il, **variants} if interleaved else {}
        for name in ["tessel"] + list(il_kernels):
            c_out = torch.full((B, H), float("nan"), **f16)
            h_out = torch.full((B, H), float("nan"), **f16)
            if name == "tessel":
                kernel(x, h, c, wx, wh, b4, c_out, h_out)
            else:
                il_kernels[name](x, h, c, wx_il, wh_il, b_il, c_out, h_out)
            torch.cuda.synchronize()
            checks[name] = {"rel_err_c": rel(c_out[r], c_ref), "rel_err_h": rel(h_out[r], h_ref),
                            "rel_err_vs_torch": rel(torch.cat([c_out, h_out], 1),
                                                    torch.cat([c_t, h_t], 1).double())}
        rel_err = max(max(v["rel_err_c"], v["rel_err_h"]) for v in checks.values())
        torch_err = max(v["rel_err_vs_torch"] for v in checks.values())
        passed = rel_err <= 2e-3 and torch_err <= 4e-3
        failures += not passed

        co, ho = torch.empty_like(c), torch.empty_like(h)
        zero_b = torch.zeros_like(b)
        fns = {"tessel": lambda: kernel(x, h, c, wx, wh, b4, co, ho)}
        for name, k in il_kernels.items():
            fns[name] = lambda k=k: k(x, h, c, wx_il, wh_il, b_il, co, ho)
        fns.update({"unfused": lambda: unfused(x, h, c, w_ih, w_hh, b),
               "unfused-graph": graphed(unfused, x, h, c, w_ih, w_hh, b)})
        try:
            torch._VF.lstm_cell(x, (h, c), w_ih, w_hh, b, zero_b)
            fns["aten"] = lambda: torch._VF.lstm_cell(x, (h, c), w_ih, w_hh, b, zero_b)
        except (RuntimeError, AttributeError) as e:
            print("torch._VF.lstm_cell does not run (%s)" % str(e).splitlines()[0])
        times = dict(zip(fns, time_interleaved(list(fns.values()), 5, args.iterations)))
        flops = 2.0 * B * 4 * H * (I + H)
        best = min((k for k in times if k.startswith("tessel")), key=lambda k: times[k])
        rec = {"name": "lstm_cell", "dtype": "f16", "shape": shape, "B": B, "I": I, "H": H,
               "kernel": best, "ms": times[best], "tflops": flops / times[best] / 1e9,
               "tessel_ms": {k: v for k, v in times.items() if k.startswith("tessel")},
               "baselines": {k: v for k, v in times.items() if not k.startswith("tessel")},
               "ratio": {k: v / times[best] for k, v in times.items() if not k.startswith("tessel")},
               "checks": checks, "rel_err": rel_err, "rel_err_vs_torch": torch_err,
               "torch_rel_err": torch_ref_err, "passed": passed,
               **record}
        rows_out.append(rec)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
        print("%-16s %s | %s | %s | torch's rel_err %.1e%s"
              % (shape, "  ".join("%s %.4f ms" % (k, v) for k, v in rec["tessel_ms"].items()),
                 "  ".join("%s %.4f ms x%.2f" % (k, v, rec["ratio"][k])
                           for k, v in rec["baselines"].items()),
                 "  ".join("%s c %.1e h %.1e vs torch %.1e" % (k, v["rel_err_c"], v["rel_err_h"],
                                                              v["rel_err_vs_torch"])
                           for k, v in checks.items()),
                 torch_ref_err, "" if passed else "  FAILED"), flush=True)
    print("\n| B x I x H | tessel ms | tessel-il ms | TFLOP/s (best) | unfused ms | ratio | "
          "unfused-graph ms | ratio | aten lstm_cell ms | ratio | rel_err | ok |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for rec in rows_out:
        bl, ra, tm = rec["baselines"], rec["ratio"], rec["tessel_ms"]
        aten = ("%.4f | %.2f" % (bl["aten"], ra["aten"])) if "aten" in bl else "- | -"
        il = "%.4f" % tm["tessel-il"] if "tessel-il" in tm else "-"
        print("| %s | %.4f | %s | %.0f | %.4f | %.2f | %.4f | %.2f | %s | %.1e | %s |"
              % (rec["shape"], tm["tessel"], il, rec["tflops"], bl["unfused"], ra["unfused"],
                 bl["unfused-graph"], ra["unfused-graph"], aten, rec["rel_err"],
                 "ok" if rec["passed"] else "FAIL"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
