// PingpongConsumers: the warpgroups of a consumer role take turns at the tensor cores, so that
// one warpgroup's SIMT work between its wgmmas (attention's softmax) runs while another's wgmmas
// compute (FlashAttention-3's ping-pong schedule, paper 000 §6 / 001 §V; the ops are the turns of
// src/ir/async.h, level 2).
//
// Why. A consumer of two warpgroups whose loop issues a wgmma, waits for it, works on its result
// in registers and issues the next (S = Q·Kᵀ, softmax, O += P·V) keeps the two warpgroups in
// step: both issue, both wait, both run the softmax while the tensor cores idle. Measured on the
// H100 (bench/results/2026-11-26-attention-h100.md): 380-407 TFLOP/s at head dim 128, half of
// what the tensor cores give, because the softmax of a 128x128 tile costs about as long as its
// two GEMMs. Turns order the issue across warpgroups — 0's GEMM, 1's GEMM, 0's next, 1's next —
// so that when warpgroup 0 waits for its GEMM and then runs its softmax, warpgroup 1's GEMM is
// next in the tensor cores' queue, and the two halves of the work overlap.
//
// Which loops. Where pinned, in a role of 2 or more warpgroups that issues wgmma (a consumer), every loop that
// directly holds a *synchronous* wgmma mma (pipeline-arefs left it so: its result is read in the
// same iteration) and register work besides mmas. Each such mma becomes
//   turn_wait; %r = mma ... {async}; mma_commit; turn_pass; mma_wait {pending = 0}
// (issued in the warpgroup's turn, passed on before waiting, so the next warpgroup's issue is not
// held up behind this one's wait), and the role begins with `turn_begin` (after setmaxnreg).
// Loops with asynchronous mmas (GEMM mainloops) are left alone: their wgmmas already overlap.
// Nothing else moves, so results do not change; the turns only order issue.
//
// When. Only where the block_grid pins `pingpong = true` (an error when no loop qualifies). The
// turns pay where the register work outweighs the GEMMs and lose a little where it does not,
// measured on the H100 (bench/results/2026-11-26-attention-h100.md, B=4 H=32, ratio to cuDNN
// with / without): head dim 64 at L = 4K 0.80 / 0.74; head dim 128 0.685 / 0.701 at 4K,
// 0.658 / 0.708 at 16K, causal 0.678 / 0.740. Without a cost model that predicts the sign, the
// default keeps the warpgroups in step and examples/kernels/flash_attention_d64.tir pins it.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Adds turns to every qualifying consumer loop of `module`'s kernels (rules above).
void pingpong_consumers(ir::Module& module);

}  // namespace tessel::transforms
