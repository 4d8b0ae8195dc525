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
// Which loops. Where pinned, in a role of 2 or more warpgroups that issues wgmma (a consumer),
// every loop that directly holds a wgmma mma and register work besides mmas (not a GEMM
// mainloop, whose wgmmas already overlap). A synchronous mma there first becomes
// `mma {async}; mma_commit; mma_wait {pending = 0}`. Then a warpgroup *holds the turn* from an
// issue that follows a wait (or the body's start) up to its next mma_wait, and passes the turn
// before that wait, so that the next warpgroup's issue is not held up behind this one's wait:
//   turn_wait; %s = mma {async}; mma_commit; turn_pass; mma_wait {pending = 0}; <softmax> ...
// A body whose last group stays in flight across the back edge (pipeline-arefs' wait-at-use:
// O += P·V) ends holding the turn, so it is entered holding it: the turn is taken before the loop
// and passed after it, and one turn covers P·V of tile j and Q·Kᵀ of tile j+1 (FA3's pairing).
// The role begins with `turn_begin` (after setmaxnreg). Nothing else moves: the turns only order
// issue, results do not change.
//
// When. Only where the block_grid pins `pingpong = true` (an error when no loop qualifies). The
// turns pay where the register work outweighs the GEMMs and lose where it does not, measured on
// the H100 (bench/results/2026-11-26-attention-h100.md, B=4 H=32, ratio to cuDNN with / without
// turns, before coarse-pipeline): head dim 64 at L = 4K 0.80 / 0.74 (before specialize-masks);
// head dim 128, with specialize-masks, 0.70 / 0.81 at 4K, 0.67 / 0.85 at 16K. With
// coarse-pipeline's rotated loop (one turn covers S of tile j + 1 and P·V of tile j, FA3's
// pairing; 2026-11-26-attention-coarse-h100.md) the sign is small and mixed: head dim 128
// 0.870 / 0.853 at 1K, 0.967 / 0.951 at 4K, 1.069 / 1.066 at 16K, causal 0.746 / 0.723, 0.912 /
// 0.898, 0.980 / 1.003, head dim 64 0.941 / 0.918 and 0.976 / 0.974 — within cuDNN's own
// run-to-run spread. Without a cost model that predicts the sign, the default keeps the
// warpgroups in step, and no example pins the turns.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Adds turns to every qualifying consumer loop of `module`'s kernels (rules above).
void pingpong_consumers(ir::Module& module);

}  // namespace tessel::transforms
