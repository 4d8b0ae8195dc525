// SynthesizeLayouts: gives every register tensor a thread-value layout and every mma and reduce
// an atom (Hexcute Algorithm 1, with the instruction-selection search of §5.3).
//
// The op graph is split at memory: copies from and to global or shared memory and `rearrange`
// impose nothing between their two sides, so each connected piece of register dataflow is solved
// on its own. Anchors come first: every mma, tiled with an atom chosen by a depth-first search
// over the atoms the target offers (wgmma before mma.sync on sm_90a) and the ways to spread them
// over the block's warps, scored by an analytic latency model (tensor-core cycles, shared-memory
// operand traffic, instruction issue, accumulator registers per thread, and the cost of every
// rearrange the choice forces); then, for pieces with no mma, the largest register copy from
// global memory, made coalesced (each thread a 16-byte vector along the contiguous dimension),
// then the largest from shared memory (a reduction over a shared tile an mma also reads), and only
// then the values no constraint reached, in program order.
// Constraints propagate from a ready queue: elementwise ops and casts make their tensors' layouts
// equal, a reduce's result is the projection of its source's layout, a broadcast's source is the
// projection of its result's, loop-carried values keep one layout, and an mma's A, B and C are the
// tiled atom's fragments (the equations of Hexcute Appendix B, solved constructively). Where two
// constraints meet with different layouts a `rearrange` is inserted at the use (the two-GEMM case);
// a value whose layout the writer pinned keeps it, and a pinned accumulator that no atom tiling
// produces is an error naming the op and both layouts.
//
// Results in the IR: register tensor types carry their layout; `block_grid` gets `threads = T`
// (unless pinned there); mma gets `atom`, `tiling = [warps or warpgroups along M, along N]` and,
// for operands still in shared memory, `a_fragment` / `b_fragment` (the register fragments the
// atom needs, over the operand's [rows, K] / [N, K] tile); reduce gets `atom` (the shuffle
// butterfly over the lanes that share a row) or `cross_warp` when the reduction leaves the warp;
// copies between registers and global memory get `atom` (the widest vector whose alignment the
// kernel's facts prove).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "layout/tv_layout.h"
#include "target/cuda/target.h"
#include "transforms/layout/layout_utils.h"
#include "transforms/layout/mma_choices.h"

namespace tessel::transforms {

struct SynthesisOptions {
  target::cuda::Target target = target::cuda::Target::sm90a();
};

// The pass (registered as `synthesize-layouts`).
void synthesize_layouts(ir::Module& module, const SynthesisOptions& options = {});

}  // namespace tessel::transforms
