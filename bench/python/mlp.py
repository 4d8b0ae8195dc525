"""Multi-layer perceptron (Graphene §6, Figure 11): tessel's fused examples/kernels/mlp.tir against
cuBLAS(Lt) + PyTorch, in one process.

  h_0 = x,  h_l = relu(h_{l-1} W_lᵀ + b_l)  for l = 1 .. L,  y = h_L

x [M,128], W [L,128,128] (each layer's weight as nn.Linear keeps it, [out, in]), b [L,128], f16;
every layer 128 wide — the sizes at which Graphene fuses the layers ("N = K <= 128 with arbitrary
M"): a block's 128 rows of every intermediate stay in registers, one layer's output feeding the
next layer's wgmma as its register A operand; only the weights stream through shared memory.

Baselines, each timed interleaved with tessel launch by launch on the same tensors:
  unfused        per layer torch.addmm(b, h, Wᵀ) (cuBLAS, the bias as its C input) then torch.relu
                 (PyTorch's elementwise kernel): 2 L launches;
  unfused-graph  the same sequence replayed from a CUDA graph (no host launch gaps: GPU time);
  lt             per layer torch._addmm_activation(b, h, Wᵀ) (cuBLASLt's fused bias + ReLU
                 epilogue: Graphene's baseline, "cumulative cuBLASLt invocations"): L launches;
  lt-graph       the same from a CUDA graph.
tessel's kernels are timed both launched from Python (eager: the host's launch path between the
events when the kernel is shorter than it) and replayed from a CUDA graph (GPU time).
ratio = eager baseline time / eager tessel time, and graphed baseline / graphed tessel (medians of
per-launch CUDA events); the example's times, not the fastest of --variants (reported beside it).
Check: y poisoned (NaN) before tessel's launch; rows 0..63, the last 64 and every 61st against a
float64 reference that rounds each layer's output to f16 as the kernel and PyTorch store it (so an
error does not compound through L layers into the tolerance), and all of y against the unfused
PyTorch result.

usage: mlp.py [--shapes MxL,...] [--json FILE] [--iterations N] [--variants FILE.tir ...]
"""
import argparse
import json
import os
import sys

import torch

import tessel
from bench_common import graphed, provenance, repository_root, time_interleaved

WIDTH = 128


def unfused(x, w, b):
    h = x
    for l in range(w.shape[0]):
        h = torch.relu(torch.addmm(b[l], h, w[l].t()))
    return h


def cublaslt(x, w, b):
    h = x
    for l in range(w.shape[0]):
        h = torch._addmm_activation(b[l], h, w[l].t())
    return h


def reference(x, w, b, rows):
    h = x[torch.tensor(rows, device="cuda")].double()
    for l in range(w.shape[0]):
        h = torch.relu(h @ w[l].double().t() + b[l].double()).half().double()
    return h


def rel(got, want):
    return (torch.linalg.norm(got.double() - want) / torch.linalg.norm(want)).item()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="64x2,64x8,64x20,256x8,1000x4,1024x8,4096x2,4096x8,4096x20,"
                   "4097x8,16384x8,65536x8,65536x20")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--variants", nargs="*", default=[],
                   help="more .tir files with mlp.tir's parameters, checked and timed beside it "
                        "(a file ending in .lowered.tir is lowered IR, compiled with the verify pass only)")
    args = p.parse_args()
    root = repository_root()
    kernels = {"tessel": tessel.compile_file(os.path.join(root, "examples/kernels/mlp.tir"))}
    for path in args.variants:
        lowered = path.endswith(".lowered.tir")
        kernels["tessel:" + os.path.basename(path)[:-4]] = tessel.compile_file(
            path, passes=["verify"] if lowered else ())
    record = provenance("mlp.py")
    failures = 0
    rows_out = []
    for shape in args.shapes.split(","):
        M, L = (int(v) for v in shape.split("x"))
        torch.manual_seed(M * 7 + L * 13)
        f16 = dict(device="cuda", dtype=torch.float16)
        x = torch.randn(M, WIDTH, **f16)
        # He initialisation keeps the activations' scale through L ReLU layers.
        w = torch.randn(L, WIDTH, WIDTH, **f16) * (2.0 / WIDTH) ** 0.5
        b = torch.randn(L, WIDTH, **f16) * 0.1
        rows = sorted({r for r in range(M) if r < 64 or r >= M - 64 or r % 61 == 0})
        want = reference(x, w, b, rows)
        r = torch.tensor(rows, device="cuda")
        y_t = unfused(x, w, b)
        torch_err = rel(y_t[r], want)
        checks = {}
        for name, kernel in kernels.items():
            y = torch.full((M, WIDTH), float("nan"), **f16)
            kernel(x, w, b, y)
            torch.cuda.synchronize()
            checks[name] = {"rel_err": rel(y[r], want), "rel_err_vs_torch": rel(y, y_t.double()),
                            "finite": bool(torch.isfinite(y).all().item())}
        rel_err = max(c["rel_err"] for c in checks.values())
        vs_torch = max(c["rel_err_vs_torch"] for c in checks.values())
        passed = all(c["finite"] for c in checks.values()) and rel_err <= 4e-3 and vs_torch <= 8e-3
        failures += not passed

        out = torch.empty_like(y_t)
        fns = {}
        for name, kernel in kernels.items():
            launch = lambda kernel=kernel: kernel(x, w, b, out)
            fns[name] = launch
            try:  # GPU time without the host's launch path, as the graphed baselines
                fns[name + "-graph"] = graphed(launch)
            except RuntimeError as e:
                print("%s does not capture into a CUDA graph (%s)" % (name, str(e).splitlines()[0]))
        fns.update({"unfused": lambda: unfused(x, w, b),
                    "unfused-graph": graphed(unfused, x, w, b)})
        try:
            cublaslt(x, w, b)
            fns["lt"] = lambda: cublaslt(x, w, b)
            fns["lt-graph"] = graphed(cublaslt, x, w, b)
        except (RuntimeError, AttributeError) as e:
            print("torch._addmm_activation does not run (%s)" % str(e).splitlines()[0])
        times = dict(zip(fns, time_interleaved(list(fns.values()), 5, args.iterations)))
        flops = 2.0 * M * WIDTH * WIDTH * L
        mine = times["tessel"]
        mine_graph = times.get("tessel-graph")
        rec = {"name": "mlp", "dtype": "f16", "shape": shape, "M": M, "L": L, "width": WIDTH,
               "ms": mine, "tflops": flops / mine / 1e9,
               "tessel_ms": {k: v for k, v in times.items() if k.startswith("tessel")},
               "baselines": {k: v for k, v in times.items() if not k.startswith("tessel")},
               "ratio": {k: v / mine for k, v in times.items() if not k.startswith("tessel")},
               # graphed baselines against the graphed example: GPU time against GPU time
               "ratio_graph": ({k: v / mine_graph for k, v in times.items()
                                if k.endswith("-graph") and not k.startswith("tessel")}
                               if mine_graph else {}),
               "checks": checks, "rel_err": rel_err, "rel_err_vs_torch": vs_torch,
               "torch_rel_err": torch_err, "passed": passed, **record}
        rows_out.append(rec)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
        print("%-10s %s | %s | rel_err %.1e (torch's %.1e) vs torch %.1e%s"
              % (shape, "  ".join("%s %.4f ms" % kv for kv in rec["tessel_ms"].items()),
                 "  ".join("%s %.4f ms x%.2f" % (k, v, rec["ratio"][k])
                           for k, v in rec["baselines"].items()),
                 rel_err, torch_err, vs_torch, "" if passed else "  FAILED"), flush=True)
    print("\n| M x L | tessel ms (eager / graph) | TFLOP/s (graph) | unfused ms | ratio | lt ms | ratio "
          "| unfused-graph ms | ratio (graph / graph) | lt-graph ms | ratio (graph / graph) | "
          "fastest tessel kernel (graph) | rel_err | ok |")
    print("| --- " * 13 + "|")
    for rec in rows_out:
        bl, ra, rg, tm = rec["baselines"], rec["ratio"], rec["ratio_graph"], rec["tessel_ms"]
        graph = tm.get("tessel-graph")
        cell = lambda n, r: ("%.4f | **%.2f**" % (bl[n], r[n])) if n in bl and n in r else "- | -"
        graphs = {k: v for k, v in tm.items() if k.endswith("-graph")}
        fastest = min(graphs, key=graphs.get) if graphs else None
        print("| %s | %.4f / %s | %s | %s | %s | %s | %s | %s | %.1e | %s |" % (
            rec["shape"], tm["tessel"], "%.4f" % graph if graph else "-",
            "%.0f" % (rec["tflops"] * rec["ms"] / graph) if graph else "-",
            cell("unfused", ra), cell("lt", ra), cell("unfused-graph", rg), cell("lt-graph", rg),
            "%s %.4f" % (fastest[:-6], graphs[fastest]) if fastest else "-",
            rec["rel_err"], "ok" if rec["passed"] else "FAIL"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
