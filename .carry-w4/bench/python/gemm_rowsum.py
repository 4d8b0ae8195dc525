#!/usr/bin/env python3
"""GEMM + row reduction (Cypress §5.2): C = A B^T and y[m] = sum_k A[m,k] in f32, one kernel, in
one process against the tile-program version and the library pair.

Kernels (A [M,K], B [N,K] f16 K-major, C [M,N] f16, y [M,1] f32):
  task         the tile IR the task program gemm_rowsum and its default mapping lower to
               (`tessel task gemm_rowsum`, written to a file given by --task): the row sums read
               the A tile the GEMM holds in shared memory;
  task-reg     the same program under a mapping whose row sums read their A slice into registers
               from global memory (--task-reg; optional);
  tile         examples/kernels/gemm_rowsum.tir, the tile program written by hand;
  NAME         any other kernel of the same parameters (--kernel NAME=FILE, repeated; a FILE
               ending in .lowered.tir is lowered IR, compiled with the verify pass only);
  gemm         with --gemm FILE: a plain GEMM (A, B, C) for what the row sums cost (its C is
               checked, it has no y).
Baselines, timed interleaved with the kernels launch by launch on the same tensors:
  cublas+sum   torch.matmul(A, B.T) (cuBLAS) then torch.sum(A, 1, dtype=float32) (2 kernels);
  cublas       torch.matmul alone (what the fused row sums cost above a GEMM).
ratio = baseline time / kernel time (medians of per-launch CUDA events).
Check: C and y poisoned (NaN) before each kernel's launch; y whole and C's rows 0..63, the last 64
and every 61st against float64 (rel_err = ||got - ref|| / ||ref||), fresh random inputs per shape.

usage: gemm_rowsum.py --task FILE [--task-reg FILE] [--kernel NAME=FILE ...] [--gemm FILE]
                      [--shapes MxNxK,...] [--json FILE]
"""
import argparse
import json
import os
import sys

import torch

import tessel
from bench_common import provenance, repository_root, time_interleaved


def rel(got, want):
    return (torch.linalg.norm(got.double() - want) / torch.linalg.norm(want)).item()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", required=True)
    p.add_argument("--task-reg")
    p.add_argument("--kernel", action="append", default=[])
    p.add_argument("--gemm")
    p.add_argument("--shapes", default="1000x520x272,257x129x88,8192x8192x8192,8192x8192x4096,"
                   "4096x4096x4096,8191x4097x520")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=30)
    args = p.parse_args()
    root = repository_root()
    kernels = {"task": tessel.compile_file(args.task)}
    if args.task_reg:
        kernels["task-reg"] = tessel.compile_file(args.task_reg)
    kernels["tile"] = tessel.compile_file(os.path.join(root, "examples/kernels/gemm_rowsum.tir"))
    for spec in args.kernel:
        name, path = spec.split("=", 1)
        lowered = path.endswith(".lowered.tir")
        kernels[name] = tessel.compile_file(path, passes=["verify"] if lowered else ())
    if args.gemm:
        kernels["gemm"] = tessel.compile_file(args.gemm)
    record = provenance("gemm_rowsum.py")
    failures = 0
    rows_out = []
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        torch.manual_seed(M * 7 + N * 13 + K)
        f16 = dict(device="cuda", dtype=torch.float16)
        A = torch.randn(M, K, **f16)
        B = torch.randn(N, K, **f16) / K ** 0.5
        rows = sorted({r for r in range(M) if r < 64 or r >= M - 64 or r % 61 == 0})
        r = torch.tensor(rows, device="cuda")
        c_ref = A[r].double() @ B.double().T
        y_ref = A.double().sum(1, keepdim=True)
        checks = {}
        for name, k in kernels.items():
            C = torch.full((M, N), float("nan"), **f16)
            y = torch.full((M, 1), float("nan"), device="cuda", dtype=torch.float32)
            if name == "gemm":
                k(A, B, C)
            else:
                k(A, B, C, y)
            torch.cuda.synchronize()
            checks[name] = {"rel_err_c": rel(C[r], c_ref)}
            if name != "gemm":
                checks[name]["rel_err_y"] = rel(y, y_ref)
        rel_err = max(max(v.values()) for v in checks.values())
        passed = rel_err <= 2e-3
        failures += not passed
        C = torch.empty(M, N, **f16)
        y = torch.empty(M, 1, device="cuda", dtype=torch.float32)
        fns = {name: (lambda k=k: k(A, B, C)) if name == "gemm" else (lambda k=k: k(A, B, C, y))
               for name, k in kernels.items()}
        fns["cublas+sum"] = lambda: (torch.matmul(A, B.T), torch.sum(A, 1, dtype=torch.float32))
        fns["cublas"] = lambda: torch.matmul(A, B.T)
        times = dict(zip(fns, time_interleaved(list(fns.values()), 5, args.iterations)))
        flops = 2.0 * M * N * K
        rec = {"name": "gemm_rowsum", "dtype": "f16", "shape": shape, "M": M, "N": N, "K": K,
               "ms": {k: times[k] for k in kernels}, "tflops": {k: flops / times[k] / 1e9
                                                                for k in kernels},
               "baselines": {k: v for k, v in times.items() if k not in kernels},
               "task_vs_tile": times["tile"] / times["task"],
               "ratio": {k: {b: times[b] / times[k] for b in ("cublas+sum", "cublas")}
                         for k in kernels},
               "checks": checks, "rel_err": rel_err, "passed": passed, **record}
        rows_out.append(rec)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
        print("%-16s %s | cublas+sum %.4f ms, cublas %.4f ms | rel_err %.1e%s"
              % (shape, "  ".join("%s %.4f ms" % (k, times[k]) for k in kernels),
                 times["cublas+sum"], times["cublas"], rel_err, "" if passed else "  FAILED"),
              flush=True)
    names = list(kernels)
    print("\n| M x N x K | " + " | ".join("%s ms" % k for k in names) +
          " | task / tile | cuBLAS+sum ms | " +
          " | ".join("%s vs cuBLAS+sum" % k for k in names) + " | cuBLAS ms | rel_err | ok |")
    print("|" + " --- |" * (2 * len(names) + 6))
    for rec in rows_out:
        print("| %s | %s | %.3f | %.4f | %s | %.4f | %.1e | %s |"
              % (rec["shape"], " | ".join("%.4f" % rec["ms"][k] for k in names),
                 rec["task_vs_tile"], rec["baselines"]["cublas+sum"],
                 " | ".join("%.3f" % rec["ratio"][k]["cublas+sum"] for k in names),
                 rec["baselines"]["cublas"], rec["rel_err"], "ok" if rec["passed"] else "FAIL"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
