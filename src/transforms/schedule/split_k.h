// Split-K: the K loop of a warp-specialized kernel divided among several blocks per output tile,
// their partial accumulators reduced in a fixed order by the last block to finish.
//
// Why. A GEMM with few output tiles leaves most SMs idle: 16x4096x4096 has 16 tiles of 128x256
// for 132 SMs, so 116 SMs wait while 16 walk all of K (measured 0.29x cuBLAS,
// bench/results/2026-11-26-gemm-sweep-baseline-h100.md). Splitting K into S parts gives 16 S
// units of work. The parts' sums meet in global memory: every part writes its f32 partial tile to
// a workspace and arrives on the tile's counter; the part that arrives last adds the S partials in
// the order 0, 1, ..., S - 1 — the same sums whatever the arrival order, so the result is
// deterministic — and runs the epilogue. Nobody waits for anybody (no spin on a flag), so no
// launch can deadlock, whatever the residency.
//
// What the pass does, on the level-1 IR after warp-specialize (before stage-stores, persistent and
// lower-arefs), to a kernel whose block_grid pins `split_k = auto` or `split_k = S` (S >= 1; 1 and
// an absent pin leave the kernel as it is):
//   %bm, %bn = block_grid %tm, %tn {split_k = auto}
// becomes, at the top level just before the roles (the grid's extents are computed there),
//   %splits = <S, or the cost model below>
//   %partials = workspace %splits : global<f32>[M,N]        (shaped like the output tensor)
//   %counters = workspace %tiles : global<i32>[1]           (one arrival counter per tile)
//   %bm, %bn, %part = block_grid %tm, %tn, %splits {split_parts}
// (`split_parts` tells persistent that the third dimension counts parts of one tile, taken
// together; an unmarked third dimension is a batch, taken one problem after another) and every
// role gets its part's K blocks [first, end) = [part K / S, (part + 1) K / S) (K = the
// trip count of its `for %k = 0 to %K step 1` loop, the same top-level value in every role):
// the loop runs `for %k = 0 to %k_count`, every `tile` coordinate %k in it — and every op that
// computes a tile coordinate from %k, such as W4A16's scale group k·64·KG / K — reads
// %k_first + %k instead, and every other use of K in the role (the consumer's release of the
// last slot) but those that compute a tile coordinate (a tile stored at row bn * K + k) becomes
// %k_count — aref sequence numbers still count 0, 1, 2, ... in each role. After the consumer's
// K loop, before the first op that reads its accumulator %acc:
//   %partial = workspace_part %partials, %part
//   copy %acc, tile(%partial, <the output tile's coordinates>) {masked}
//   %arrived = counter_arrive workspace_part(%counters, %bm * %tn + %bn), %splits
//   if %arrived == %splits - 1 {
//     %sum = for %s = 0 to %splits iter(%r = 0) { %r + copy tile(workspace_part(%partials, %s)) }
//     <the epilogue: every op after the loop that reads %acc, and all after it, on %sum>
//   }
// The partial tiles are masked like the output tile: only the elements inside the output tensor
// travel (M = 16 moves 16 rows of each 128-row tile, not 128). A kernel with swapped operands
// (Cᵀ = B·Aᵀ: the weights as wgmma's M, a few tokens as its N) stores `transpose %acc`, a register
// view; its partials keep the accumulator's orientation — a workspace shaped like the output's
// transpose, tiles at the swapped coordinates — so each thread writes and reads its fragment's
// adjacent columns as vectors, and the sum has the accumulator's shape and layout.
//
// The cost model (`auto`): S = max(1, min(SMs / tiles, K / 4, 16)) — enough parts to give every
// SM a unit, no part shorter than 4 K blocks, at most 16 partials per tile. With as many tiles as
// SMs it is 1: the kernel still runs correctly (one part, its partial read back), but a kernel
// compiled without split-K is the better choice there; choosing between the two by shape is the
// dispatcher's job (issue 11).
//
// Refused with a user error: a pin that is not `auto` or a positive integer; a kernel without
// roles or with a grid that is not 2-D; roles whose K loops differ in trip count; a
// consumer that does not store its accumulator tile (cast and elementwise ops allowed on the
// way) to exactly one global tile of its shape; that tile's coordinates computed after the loop.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Splits the K loop of every kernel of `module` that pins split_k (see above).
void split_k(ir::Module& module);

}  // namespace tessel::transforms
