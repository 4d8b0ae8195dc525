#!/usr/bin/env python3
"""Both LSTM cell kernels once each on a ragged shape, for compute-sanitizer (memcheck, racecheck,
synccheck): python3 scripts/gpu/lstm_sanitize.py (PYTHONPATH at the built extension)."""
import os
import torch
import tessel

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
B, I, H = 300, 200, 192
T = H // 64
f16 = dict(device="cuda", dtype=torch.float16)
x, h, c = torch.randn(B, I, **f16), torch.randn(B, H, **f16), torch.randn(B, H, **f16)
w_ih, w_hh, b = torch.randn(4 * H, I, **f16) * 0.05, torch.randn(4 * H, H, **f16) * 0.05, torch.randn(4 * H, **f16)
co, ho = torch.empty(B, H, **f16), torch.empty(B, H, **f16)
k = tessel.compile_file(os.path.join(root, "examples/kernels/lstm_cell.tir"))
k(x, h, c, w_ih.view(4, H, I), w_hh.view(4, H, H), b.view(4, H), co, ho)
il = tessel.compile_file(os.path.join(root, "examples/kernels/lstm_cell_interleaved.tir"))
p = lambda w: w.view(4, T, 64, -1).permute(1, 0, 2, 3).contiguous().view(T, 256, -1)
il(x, h, c, p(w_ih), p(w_hh), p(b.view(4 * H, 1)).view(T, 256), co, ho)
torch.cuda.synchronize()
print("ran both kernels", B, I, H)
