// PipelineLoops: how many iterations of shared tiles a mainloop keeps resident (`stages`) and how
// many wgmma groups it leaves pending (`mma_in_flight`), chosen from the shared-memory budget.
//
// A *mainloop* is a `for` whose body (directly, not in a nested region) copies a global tile into
// shared memory: `%a = copy %ta : shared<...>` with %ta in global memory. Without warp
// specialization those copies overlap the math by running ahead: the loop gets S slots per shared
// tile (a ring), the copies for iteration k + S - 1 are issued in iteration k, and the consumer
// waits only for its own slot — on sm_90a TMA loads completing on an mbarrier per slot, written
// as IR by lower-mainloops (lower_mainloops.h); on sm_80 cp.async groups, emitted by
// emit_cp_async_mma.cpp. Deeper rings hide more load latency but cost S times the tile bytes, so
// S is a budget question, which this pass answers and writes on the loop as integer attributes
// for those two:
//
//   `stages = S`         S >= 1 slots (S = 1: load, wait, compute; nothing ahead).
//   `mma_in_flight = N`  only on loops whose mma uses a wgmma atom: after committing iteration
//                        k's wgmma group the consumer waits until at most N groups are pending
//                        (`wgmma.wait_group N`), so N = 1 overlaps one group with the next wait.
//
// The budget. One stage costs the sum over the copies into shared memory directly in the loop body
// (every one gets a ring of S slots, whatever its source) of their tile bytes
// (extents x element bits / 8, rounded up), each rounded up to the tile's alignment: the swizzle's
// repeat, 2^(B+M+|S|) elements of Sw<B,M,S> (1024 B for the 128-byte swizzle, where the atom's
// pattern must start on a repeat so that the hardware's address-bit swizzle and the layout's
// agree), 128 B for an unswizzled TMA destination, 16 B otherwise (cp.async and vector stores).
// Rounding every tile to its own alignment means slots placed largest alignment first pack with
// no padding. The capacity is the target's opt-in shared memory per block
// (Target::shared_memory_per_block(): sm_90a 232448 B, sm_80 166912 B; the target is the
// block_grid's `target` attribute, sm_90a when absent). From it the pass reserves:
//   - 8 KiB for what the IR does not show as tensors: 2 mbarriers per slot (8 B each), the round-up
//     of the dynamic allocation's base to the largest tile alignment (its alignment minus 16 B:
//     1008 B for 128-byte swizzled tiles), the scratch of cross-warp reductions (a few KiB for a
//     128-row tile) and slack for the epilogue;
//   - the bytes of every other shared tensor of the kernel, held once for the whole kernel (the
//     emitter allocates without reuse), each rounded up to its alignment as above: shared tensors
//     made outside mainloops (a Q tile, an epilogue staging tile, an alloc, a copy nested deeper
//     than a loop's body), and the f32 scratch of every `rearrange` (the emitter moves it through
//     shared memory, 4 B per element).
// What is left is the stage budget. For one mainloop
//   S = min(C, floor(budget / bytes per stage), trip count when it is a static constant),
// at least 1, with C = 8 (kMaxStages): a memory-bound GEMM on the H200 needs more than the 3-4
// loads in flight CUTLASS and Triton default to (cuBLAS runs 6-10 stages there; measured in
// bench/results/2026-11-28-gemm-sweep-h200.md), and C = 4 (kMaxStagesReadByThreads) for a loop
// whose threads read a slot (mma.sync's ldmatrix, a dequantized weight tile): bound by that work,
// measured slower with deeper rings. A kernel with several mainloops (all resident at once) gets
// the largest common cap S <= C whose per-loop S_i = min(S, trip count_i) fit together. When a
// single stage of every loop does not fit, that is a user error naming the loop, its bytes per
// stage and the budget.
// The default N is min(1, S - 1), and 0 where the loop body reads a wgmma's result besides the
// next mma and the yield, or computes an RS wgmma's A operand (attention's softmax between its
// GEMMs without warp specialization: read_before_retire and takes_a_computed_in in
// atom_queries.h); a pinned N > 0 there is refused.
//
// Pins. A `stages` or `mma_in_flight` the writer put on a mainloop is kept and checked, never
// changed: both are integers; stages >= 1 and the pinned loops' S x bytes per stage fit the
// budget (the unpinned loops then share what is left); 0 <= mma_in_flight <= 7 (the immediate of
// wgmma.wait_group) and mma_in_flight <= stages - 1 (after the wait the N pending groups still
// read their iterations' N slots and the copies can refill only the other S - N, so S >= N + 1;
// with N = 1 the copy issued in iteration k refills iteration k - 1's slot, S - 1 iterations
// ahead; S = 1 allows only N = 0); mma_in_flight on a loop whose mma is not wgmma is refused (it
// would mean nothing). A pinned stages larger than a static trip count is allowed (the extra
// slots stay empty). Each refusal names the loop, the value and the limit. Loops that are not
// mainloops are left alone, attributes and all.
//
// Runs after synthesize-shared-layouts (it reads the tiles' swizzles and the mma atoms). Writes
// one line per mainloop to `tessel opt --report=pipeline`. The budget and the pins are implemented
// once, in stage_budget.h, for this pass and for pipeline-arefs (the warp-specialized path).
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Sets `stages` (and `mma_in_flight` on wgmma loops) on every mainloop of every kernel of
// `module`, or checks the pinned ones; UserError when a loop's stages cannot fit in shared memory.
void pipeline_loops(ir::Module& module);

}  // namespace tessel::transforms
