#!/usr/bin/env python3
"""A GEMM and an RMSNorm built in Python with the tile language (tessel.tile), called on tensors.

    python3 examples/python/builder_gemm_rmsnorm.py              # the GPU when there is one
    python3 examples/python/builder_gemm_rmsnorm.py --interpret  # CPU interpreter (what CI runs)

The two kernels are the programs of examples/kernels/gemm.tir (C = A B^T, f16 in, f32
accumulation, f16 out) and rmsnorm.tir (one warp per row, its layouts pinned), written with the
Python builder instead of IR text. The script checks that the GEMM is gemm.tir's program op for op
(modulo value names), calls both kernels (torch CUDA tensors on the GPU, checked against
torch.matmul and F.rms_norm; numpy arrays or CPU tensors in the interpreter, checked against
numpy/torch on the CPU), and without a GPU compiles the GEMM to CUDA C++ for sm_90a. Exits 1 when
a check fails.
"""

import argparse
import os
import re
import sys

import tessel
from tessel.testing import relative_error
from tessel.tile import Shared, cdiv, divisible_by, f16, f32, masked, rsqrt, transpose

try:
    import torch
except ImportError:
    torch = None

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels")


@tessel.tile_kernel
def gemm(b):
    # K % 8 == 0 keeps rows 16-byte aligned (TMA); M and N are any size: partial tiles are masked.
    M, N, K = b.size("M"), b.size("N"), b.size("K", divisible_by(8))
    A, B = b.global_("A", f16, [M, K]), b.global_("B", f16, [N, K])
    C = b.global_("C", f16, [M, N])
    c128, c256, c64, c0, c1 = b.index(128), b.index(256), b.index(64), b.index(0), b.index(1)
    bm, bn = b.block_grid(cdiv(M, c128), cdiv(N, c256))
    zero = b.fill(f32, [128, 256], 0.0)

    def step(k, acc):  # one K block: both tiles into shared memory, one MMA
        a = b.copy(A.tile([128, 64], [bm, k], masked()), Shared)
        w = b.copy(B.tile([256, 64], [bn, k], masked()), Shared)
        return b.mma(a, transpose(w), acc)

    acc = b.loop(c0, cdiv(K, c64), c1, zero, step)
    C_tile = C.tile([128, 256], [bm, bn], masked())
    b.copy(b.cast(acc, f16), C_tile)


# RMSNorm's layouts, as rmsnorm.tir pins them: 8 rows of 512 columns per block of 256 threads, one
# warp per row, each lane holding 2 runs of 8 contiguous f16 (16-byte accesses).
ROW_TILE = "((32,8),(8,2)):((64,1),(8,2048))"  # (8,512): lane -> 8 columns, warp -> row
PER_ROW = "((32,8),1):((0,1),0)"               # (8): each thread holds its warp's row
WEIGHTS = "((32,8),(8,2)):((8,0),(1,256))"     # (512): every warp holds the same columns


@tessel.tile_kernel
def rmsnorm(b):
    # Y[i,:] = X[i,:] * rsqrt(mean(X[i,:]^2) + eps) * w
    M, N = b.size("M"), b.size("N", divisible_by(8))
    X, w, Y = b.global_("X", f16, [M, N]), b.global_("w", f16, [N]), b.global_("Y", f16, [M, N])
    eps = b.scalar("eps", f32)

    def tiled(x):
        return x.pin_layout(ROW_TILE)

    def per_row(x):
        return x.pin_layout(PER_ROW)

    (i,) = b.block_grid(cdiv(M, 8))
    tiles = cdiv(N, 512)

    def load(k):  # the block's rows, column tile k, as f32
        return tiled(b.cast(tiled(b.copy(X.tile([8, 512], [i, k], masked()))), f32))

    def sum_squares(k, acc):
        x = load(k)
        return per_row(acc + per_row(b.reduce_sum(tiled(x * x), [1])))

    ss = b.loop(tiles, per_row(b.fill(f32, [8], 0.0)), sum_squares)
    inv = per_row(rsqrt(per_row(per_row(ss / b.cast(N, f32)) + eps)))
    inv_b = tiled(b.broadcast(inv, [8, 512], [1]))

    def normalize(k):
        wv = b.cast(b.copy(w.tile([512], [k], masked())).pin_layout(WEIGHTS), f32)
        w_b = tiled(b.broadcast(wv.pin_layout(WEIGHTS), [8, 512], [0]))
        y = tiled(tiled(load(k) * inv_b) * w_b)
        b.copy(tiled(b.cast(y, f16)), Y.tile([8, 512], [i, k], masked()))

    b.loop(tiles, None, normalize)


def check(name, got, want, tolerance):
    error = relative_error(got, want)
    ok = error <= tolerance
    print(f"  {name:<40} rel. error {error:.2e}  {'ok' if ok else 'FAIL'}")
    return ok


def without_names(text):
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    names = {}
    return re.sub(r"%\w+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text)


def calls(on_gpu, sizes):
    M, N, K = sizes
    ok = True
    if torch is not None:
        device = "cuda" if on_gpu else "cpu"
        g = torch.Generator(device="cpu").manual_seed(0)
        a = torch.randn(M, K, generator=g, dtype=torch.float16).to(device)
        w = torch.randn(N, K, generator=g, dtype=torch.float16).to(device)
        c = torch.empty(M, N, dtype=torch.float16, device=device)
        gemm(a, w, c)
        ok &= check(f"gemm {M}x{N}x{K} vs torch.matmul", c, torch.matmul(a.float(), w.float().t()),
                    1e-2)
        x = torch.randn(M, K, generator=g, dtype=torch.float16).to(device)
        scale = torch.rand(K, generator=g, dtype=torch.float16).to(device) + 0.5
        y = torch.empty_like(x)
        rmsnorm(x, scale, y, 1e-6)
        want = torch.nn.functional.rms_norm(x.float(), (K,), scale.float(), 1e-6)
        ok &= check(f"rmsnorm {M}x{K} vs F.rms_norm", y, want, 1e-2)
    else:
        import numpy as np

        rng = np.random.default_rng(0)
        a = rng.standard_normal((M, K)).astype(np.float16)
        w = rng.standard_normal((N, K)).astype(np.float16)
        c = np.empty((M, N), np.float16)
        gemm(a, w, c)
        ok &= check(f"gemm {M}x{N}x{K} vs numpy", c,
                    a.astype(np.float32) @ w.astype(np.float32).T, 1e-2)
        x = rng.standard_normal((M, K)).astype(np.float16)
        scale = rng.uniform(0.5, 1.5, K).astype(np.float16)
        y = np.empty_like(x)
        rmsnorm(x, scale, y, 1e-6)
        xf = x.astype(np.float32)
        want = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * scale.astype(np.float32)
        ok &= check(f"rmsnorm {M}x{K} vs numpy", y, want, 1e-2)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interpret", action="store_true", help="run in the CPU interpreter")
    args = parser.parse_args()
    on_gpu = (not args.interpret and tessel.has_gpu() and torch is not None
              and torch.cuda.is_available())
    where = "the GPU" if on_gpu else "the CPU interpreter"
    print(f"tessel {where}, {'torch ' + torch.__version__ if torch else 'numpy (no torch)'}")

    tir = tessel.load_file(os.path.join(KERNELS, "gemm.tir")).source_ir
    same = without_names(gemm.source_ir) == without_names(tir)
    print(f"  {'gemm built in Python == gemm.tir':<40} {'ok' if same else 'FAIL (differs)'}")
    ok = same
    # Sizes that are not tile multiples; small in the interpreter (it computes every element).
    ok &= calls(on_gpu, (2000, 1000, 1032) if on_gpu else (70, 300, 136))
    if not on_gpu:
        # What the GPU would run: CUDA C++ for sm_90a, without NVRTC or a device.
        compiled = tessel.compile(gemm, cubin=False)
        has_wgmma = "wgmma" in compiled.cuda_source
        print(f"  {'gemm as CUDA C++ for ' + compiled.arch:<40} "
              f"{len(compiled.cuda_source.splitlines())} lines, "
              f"{'wgmma' if has_wgmma else 'FAIL: no wgmma'}, "
              f"{compiled.launch_info['threads']} threads")
        ok &= has_wgmma
    print("all ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
