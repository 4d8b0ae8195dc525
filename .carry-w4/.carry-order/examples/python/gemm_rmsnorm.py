#!/usr/bin/env python3
"""GEMM and RMSNorm from tile IR, used as drop-in replacements in a small PyTorch model.

    python3 examples/python/gemm_rmsnorm.py            # the GPU when there is one, else interpreted
    python3 examples/python/gemm_rmsnorm.py --interpret  # CPU interpreter (what CI runs), small sizes

1. Builds the two kernels (examples/kernels/gemm.tir: C = A B^T; rmsnorm.tir) and calls them on
   tensors: torch CUDA tensors on the GPU; CPU tensors, or numpy arrays where torch is absent, in the
   interpreter. Checks them against torch.matmul / torch's rms_norm (numpy without torch).
2. With torch: a small MLP block (RMSNorm -> Linear -> ReLU -> Linear, as in a transformer) whose
   RMSNorm and Linear layers are tessel kernels registered as torch custom ops (tessel.torch_op),
   compared with the same block built from torch.nn, eagerly and (on the GPU) under torch.compile.
Exits 1 when a check fails.
"""

import argparse
import os
import sys

import tessel
from tessel import torch_op
from tessel.testing import relative_error

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels")

try:
    import torch
except ImportError:
    torch = None


def check(name, got, want, tolerance):
    error = relative_error(got, want)
    ok = error <= tolerance
    print(f"  {name:<34} rel. error {error:.2e}  {'ok' if ok else 'FAIL'}")
    return ok


def direct_calls(gemm, rmsnorm, on_gpu, sizes):
    M, N, K = sizes
    ok = True
    if torch is not None:
        device = "cuda" if on_gpu else "cpu"
        g = torch.Generator(device="cpu").manual_seed(0)
        a = torch.randn(M, K, generator=g, dtype=torch.float16).to(device)
        b = torch.randn(N, K, generator=g, dtype=torch.float16).to(device)
        c = torch.empty(M, N, dtype=torch.float16, device=device)
        gemm(a, b, c)
        ok &= check(f"gemm {M}x{N}x{K} vs torch.matmul", c,
                    torch.matmul(a.float(), b.float().t()), 1e-2)
        x = torch.randn(M, K, generator=g, dtype=torch.float16).to(device)
        w = torch.randn(K, generator=g, dtype=torch.float16).to(device)
        y = torch.empty_like(x)
        rmsnorm(x, w, y, 1e-6)
        want = torch.nn.functional.rms_norm(x.float(), (K,), w.float(), 1e-6)
        ok &= check(f"rmsnorm {M}x{K} vs F.rms_norm", y, want, 1e-2)
    else:
        import numpy as np

        rng = np.random.default_rng(0)
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((N, K)).astype(np.float16)
        c = np.empty((M, N), np.float16)
        gemm(a, b, c)
        ok &= check(f"gemm {M}x{N}x{K} vs numpy", c, a.astype(np.float32) @ b.astype(np.float32).T,
                    1e-2)
        x = rng.standard_normal((M, K)).astype(np.float16)
        w = rng.standard_normal(K).astype(np.float16)
        y = np.empty_like(x)
        rmsnorm(x, w, y, 1e-6)
        xf = x.astype(np.float32)
        want = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * w.astype(np.float32)
        ok &= check(f"rmsnorm {M}x{K} vs numpy", y, want, 1e-2)
    return ok


def model_check(gemm, rmsnorm, on_gpu, sizes):
    tokens, hidden, ffn = sizes
    device = "cuda" if on_gpu else "cpu"
    mm = torch_op.register(gemm, "tessel_example::gemm")          # (A, B) -> C = A B^T
    norm = torch_op.register(rmsnorm, "tessel_example::rmsnorm")  # (X, w, eps) -> Y

    class TesselRMSNorm(torch.nn.Module):  # drop-in for torch.nn.RMSNorm(hidden, eps)
        def __init__(self, reference):
            super().__init__()
            self.weight, self.eps = reference.weight, reference.eps

        def forward(self, x):
            return norm(x, self.weight, self.eps)

    class TesselLinear(torch.nn.Module):  # drop-in for torch.nn.Linear(bias=False)
        def __init__(self, reference):
            super().__init__()
            self.weight = reference.weight  # [out, in]: the GEMM's B operand as it is

        def forward(self, x):
            return mm(x, self.weight)

    torch.manual_seed(0)
    reference = torch.nn.Sequential(
        torch.nn.RMSNorm(hidden, eps=1e-6),
        torch.nn.Linear(hidden, ffn, bias=False), torch.nn.ReLU(),
        torch.nn.Linear(ffn, hidden, bias=False)).to(device=device, dtype=torch.float16)
    with torch.no_grad():
        reference[0].weight.uniform_(0.5, 1.5)
    ours = torch.nn.Sequential(TesselRMSNorm(reference[0]), TesselLinear(reference[1]),
                               torch.nn.ReLU(), TesselLinear(reference[3]))
    x = torch.randn(tokens, hidden, device=device, dtype=torch.float16)
    ok = True
    with torch.no_grad():
        want = reference.float()(x.float())
        reference.half()
        ok &= check(f"model {tokens}x{hidden}->{ffn} eager", ours(x), want, 2e-2)
        if on_gpu:
            compiled = torch.compile(ours, fullgraph=True)
            ok &= check("model under torch.compile", compiled(x), want, 2e-2)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interpret", action="store_true", help="run in the CPU interpreter")
    args = parser.parse_args()
    on_gpu = not args.interpret and tessel.has_gpu() and torch is not None and torch.cuda.is_available()
    gemm = tessel.load_file(os.path.join(KERNELS, "gemm.tir"))
    rmsnorm = tessel.load_file(os.path.join(KERNELS, "rmsnorm.tir"))
    where = "the GPU" if on_gpu else "the CPU interpreter"
    print(f"tessel {where}, {'torch ' + torch.__version__ if torch else 'numpy (no torch)'}")
    # Interpreted sizes are small (the interpreter computes each element exactly, slowly) and not
    # tile multiples, as are the GPU ones.
    ok = direct_calls(gemm, rmsnorm, on_gpu, (2000, 1000, 1032) if on_gpu else (70, 300, 136))
    if torch is not None:
        ok &= model_check(gemm, rmsnorm, on_gpu, (1000, 1024, 2816) if on_gpu else (40, 512, 264))
    else:
        print("  (the torch model part needs torch)")
    print("all ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
