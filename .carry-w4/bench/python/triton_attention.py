"""A Triton FlashAttention-2 forward: the baseline issue 12 names ("the Triton tutorial's fused
attention"), written for this bench after the algorithm of Triton's tutorial 06-fused-attention,
not copied from it (the tutorial is not installed with the triton package on the device).

What it shares with the tutorial's forward on Hopper, so that it is a fair stand-in:
- one program per (128- or 64-row query tile, batch x head); Q, K, V read through host-built TMA
  tensor descriptors over the [B*H*L, D] view (triton.tools.tensor_descriptor.TensorDescriptor);
- the online softmax in base 2 with the 1/sqrt(D) * log2(e) scale folded into one multiply, the
  running output rescaled by exp2(m_old - m_new), P cast to the input type for the second tl.dot;
- causal in two stages: the key tiles wholly below the diagonal without a mask, then the diagonal
  band with one;
- an autotuned configuration (query/key tile, pipeline stages, warps), keyed by L and D and
  chosen by triton.autotune's own timing before the bench times anything.
It requires L % BLOCK_M == 0 and L % BLOCK_N == 0 (the tutorial's restriction too); shapes that do
not divide are reported as refused.
"""
import math

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


def _set_block_shapes(nargs):
    bm, bn, d = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_DIM"]
    nargs["desc_q"].block_shape = [bm, d]
    nargs["desc_o"].block_shape = [bm, d]
    nargs["desc_k"].block_shape = [bn, d]
    nargs["desc_v"].block_shape = [bn, d]


def _configs():
    out = []
    for bm in (64, 128):
        for bn in (64, 128):
            for stages in (3, 4):
                for warps in (4, 8):
                    # the causal stages split the key range at a multiple of BLOCK_M
                    if bn > bm or (bm == 64 and warps == 8):
                        continue
                    out.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=stages,
                                             num_warps=warps, pre_hook=_set_block_shapes))
    return out


@triton.jit
def _key_range(acc, l_i, m_i, q, desc_k, desc_v, row0, key_lo, key_hi, offs_m, qk_scale,
               BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    offs_n = tl.arange(0, BLOCK_N)
    for start in range(key_lo, key_hi, BLOCK_N):
        k = desc_k.load([row0 + start, 0])
        s = tl.dot(q, k.T)
        if MASKED:
            keep = offs_m[:, None] >= (start + offs_n[None, :])
            s = tl.where(keep, s * qk_scale, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            s = s - m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            s = s * qk_scale - m_new[:, None]
        p = tl.math.exp2(s)
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([row0 + start, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.autotune(configs=_configs(), key=["L", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attention_forward(desc_q, desc_k, desc_v, desc_o, qk_scale, L,
                       HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tile = tl.program_id(0)
    head = tl.program_id(1)
    row0 = head * L
    offs_m = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    q = desc_q.load([row0 + tile * BLOCK_M, 0])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:
        below = tile * BLOCK_M
        acc, l_i, m_i = _key_range(acc, l_i, m_i, q, desc_k, desc_v, row0, 0, below, offs_m,
                                   qk_scale, BLOCK_N, False)
        acc, l_i, m_i = _key_range(acc, l_i, m_i, q, desc_k, desc_v, row0, below,
                                   below + BLOCK_M, offs_m, qk_scale, BLOCK_N, True)
    else:
        acc, l_i, m_i = _key_range(acc, l_i, m_i, q, desc_k, desc_v, row0, 0, L, offs_m,
                                   qk_scale, BLOCK_N, False)
    acc = acc * (1.0 / l_i)[:, None]
    desc_o.store([row0 + tile * BLOCK_M, 0], acc.to(q.dtype))


def refuses(l):
    """Why the kernel cannot take sequence length l, or None."""
    if l % 128:
        return "L = %d is not a multiple of 128" % l
    return None


def triton_attention(q, k, v, causal, out=None):
    """O = softmax(Q Kᵀ / sqrt(D) [+ causal mask]) V for q, k, v [B, H, L, D] contiguous."""
    b, h, l, d = q.shape
    if refuses(l):
        raise RuntimeError(refuses(l))
    o = torch.empty_like(q) if out is None else out
    flat = [t.reshape(b * h * l, d) for t in (q, k, v, o)]
    dummy = [d, d]  # the autotuner's pre_hook sets the block shapes per configuration
    descs = [TensorDescriptor(t, shape=list(t.shape), strides=list(t.stride()), block_shape=dummy)
             for t in flat]
    grid = lambda meta: (triton.cdiv(l, meta["BLOCK_M"]), b * h)
    _attention_forward[grid](*descs, 1.0 / math.sqrt(d) * 1.4426950408889634, l,
                             HEAD_DIM=d, CAUSAL=causal)
    return o
