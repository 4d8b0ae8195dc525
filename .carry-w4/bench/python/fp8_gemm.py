#!/usr/bin/env python3
"""FP8 GEMM: tessel's examples/kernels/gemm_e4m3.tir against cuBLASLt, in one process.

C = scale_a scale_b (A B^T), A [M,K] and B [N,K] in float8_e4m3fn, bf16 out. The baseline is
torch._scaled_mm (PyTorch's FP8 GEMM, which calls cublasLtMatmul with the A/B scale pointers) on
the same tensors: `torch._scaled_mm(A, B.t(), scale_a, scale_b, out_dtype=torch.bfloat16)`.
Timing as tessel's C++ bench: a warm-up, then the two launched alternately, each launch between
its own CUDA events; medians; ratio = cuBLASLt time / tessel time. Check: C poisoned (NaN) before
tessel's launch, every row of the first and last 128 and a stride through the rest against
float64 products of the decoded inputs (rel_err), and all of C against cuBLASLt's output.
Inputs: torch.randn scaled by 0.5, rounded to e4m3.

usage: fp8_gemm.py [--shapes MxNxK,...] [--json FILE] [--iterations N]
"""
import argparse
import json
import math
import os
import sys

import torch

import tessel
from bench_common import provenance, repository_root, time_interleaved


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="8192x8192x8192,4096x4096x4096,8192x8192x4096")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=50)
    args = p.parse_args()
    root = repository_root()
    kernel = tessel.compile_file(os.path.join(root, "examples/kernels/gemm_e4m3.tir"))
    record = provenance("fp8_gemm.py")
    failures = 0
    for shape in args.shapes.split(","):
        m, n, k = (int(x) for x in shape.split("x"))
        torch.manual_seed(m * 7 + n * 13 + k)
        a = (torch.randn(m, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
        b = (torch.randn(n, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
        sa, sb = 0.5, 0.25
        sa_t = torch.tensor(sa, device="cuda")
        sb_t = torch.tensor(sb, device="cuda")
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(a, b, c, sa, sb)
        try:
            lt = torch._scaled_mm(a, b.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16)
        except RuntimeError as e:  # cuBLASLt's FP8 GEMM wants extents that are multiples of 16
            print("%-16s cuBLASLt refuses the shape (%s): not timed" % (shape, str(e).splitlines()[0]))
            continue
        torch.cuda.synchronize()
        rows = [r for r in range(m) if r < 128 or r >= m - 128 or r % 61 == 0]
        rows_t = torch.tensor(rows, device="cuda")
        want = (a[rows_t].double() @ b.double().t()) * (sa * sb)
        got = c[rows_t].double()
        rel_err = (torch.linalg.norm(got - want) / torch.linalg.norm(want)).item()
        lt_err = (torch.linalg.norm(c.double() - lt.double()) / torch.linalg.norm(lt.double())).item()
        passed = rel_err <= 6e-3 and lt_err <= 1.2e-2
        failures += not passed
        out = torch.empty_like(c)
        mine, base = time_interleaved(
            [lambda: kernel(a, b, out, sa, sb),
             lambda: torch._scaled_mm(a, b.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16)],
            10, args.iterations)
        flops = 2.0 * m * n * k
        r = {"name": "gemm_e4m3", "dtype": "f8e4m3", "shape": shape, "ms": mine,
             "tflops": flops / mine / 1e9, "baseline": "cublasLt (torch._scaled_mm)",
             "baseline_ms": base, "baseline_tflops": flops / base / 1e9, "ratio": base / mine,
             "rel_err": rel_err, "rel_err_vs_baseline": lt_err, "passed": passed,
             **record}
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(r) + "\n")
        print("%-16s %.4f ms %7.1f TFLOP/s  (cuBLASLt %.4f ms %7.1f TFLOP/s)  ratio %.3f  rel_err %.2e"
              "  vs cuBLASLt %.2e%s" % (shape, mine, r["tflops"], base, r["baseline_tflops"],
                                        r["ratio"], rel_err, lt_err, "" if passed else "  FAILED"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
