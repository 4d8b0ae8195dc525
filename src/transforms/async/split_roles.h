// SplitRoles: the K loop of a warp-specialized kernel divided among W consumer warpgroups (and P
// producer warpgroups) of one block, the consumers' accumulators summed through shared memory —
// split-K without leaving the block.
//
// Why. A tile whose K loop is long and whose output is small (a W4A16 GEMV tile at a few tokens:
// 64 weight rows x 16 tokens, K = 8192) keeps one consumer warpgroup busy with dequantization and
// wgmma issue while the block's share of HBM bandwidth needs several: one warp per scheduler is
// latency-bound (bench/results/2026-11-26-w4a16-packed-h100.md). Split-k (split_k.cpp) gives the
// tile several blocks, but their partials meet in global memory: a release, an atomic count and
// the last part's reloads, 2.6 µs per launch measured (2026-11-27-w4a16-fixed-costs-h100.md §3).
// Here the parts are consumer roles of the same block, taking the K tiles in turn, and the sum is
// a few shared-memory stores and loads.
//
// What the pass does, on level-1 IR (after pipeline-arefs and pipeline-loops, before persistent),
// to a kernel whose block_grid is pinned `consumer_split_k = W` (consumer roles) and/or
// `producer_split_k = P` (producer roles; the block stays at most 1024 threads). The kernel has
// one consumer role (C threads) whose K loop
//   %acc = for %k = 0 to %n step 1 iter(%c = %zero) { aref_wait %ring, %k ... yield %c_next }
// waits on the rings the producer fills, and carries only accumulators that mmas update. The role
// becomes W roles of C threads each; role w takes the iterations w, w + W, ...:
//   %trips = div (%n + W - 1 - w), W                  its share of the K tiles
//   %acc = for %j = 0 to %trips step 1 iter(...) {
//     %k = add (mul %j, W), w                         the old index, for tile coordinates
//     aref_wait %ring, (x W + w)                      every sequence number x of the rings, an
//     ...                                             expression of the role's own iterations
//   }                                                 (%j; %j - F for a release F wgmma groups
//                                                     later; %trips - i for the drain after the
//                                                     loop), mapped to the turn's number
// The uses of %n that only count iterations (the drain's `%n - i` and its guards) read %trips; its
// other uses (a tile-by-tile weight layout's row, bn * n + k) keep %n.
// Roles 1..W-1 keep what stands before their K loop, the loop and its drain (the mma_waits and
// releases after it); they end by handing their accumulators to role 0 through an aref of their
// own, filled by the role's threads:
//   %part_w = aref {slots = 1} : aref<shared<f32, (R,C):(C,1)>[R,C], ...>   (top level)
//   %b = aref_acquire %part_w, 0 ; copy %acc, %b {atom = st.shared.bN} ; aref_commit %part_w, 0
// and role 0, after its drain and before the first op that reads its accumulators, adds them in
// the order w = 1, 2, ... (deterministic):
//   %b = aref_wait %part_w, 0 ; %p = copy %b : register<f32, L> ; %acc = add %acc, %p ;
//   aref_release %part_w, 0
// then runs the epilogue alone. The producer's K loop is split the same way among P producer
// roles (the loads of iterations p, p + P, ...), each a copy of the producer, which may hold
// nothing but its K loop's loads. The block_grid's `threads` grows by (W - 1) C + (P - 1) x the
// producer's threads.
//
// Sequence numbers. The producer roles acquire and commit, and the consumer roles wait for and
// release, the numbers of their turns in order (async.h: an aref's uses may alternate among the
// roles of one side). Each ring's depth D is made a multiple of lcm(W, P) (rounded down, at least
// that): then the uses of a slot, s, s + D, s + 2D, ..., all belong to one role of each side, and
// a role waiting on use n of a slot has waited on n - D itself, so the barrier's phase for n - D
// completed before anyone waits with n's parity (a parity wait cannot tell phase n from phase
// n - 2D). D must also hold what the consumers keep at once: W (F + 1) slots for F wgmma groups in
// flight each. The grid is pinned `persistent = 0`: a persistent tile loop would shift the uses
// of a tile by its sequence base, and with K tiles not a multiple of W a slot's uses would change
// roles from tile to tile. The rings, the hand-over buffers and the kernel's other shared tensors
// must fit the block's shared memory.
//
// Refused with a user error naming the op: a pin that is not a positive number, a block over
// 1024 threads, a kernel without roles or with more than one role of a side that is split, no K
// loop `for %k = 0 to %n step 1` that waits on (acquires) an aref in the role, a K loop carrying a
// value that is not an f32 sum each iteration adds to (through mma accumulators, fma addends or
// adds), aref ops of a split role outside its K loop before
// it (or after it, in a split producer), `persistent = 1` or a cluster on the same grid, a ring
// too shallow for the consumers' groups in flight, shared memory over the block's.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Splits the K loop of every kernel of `module` pinned `consumer_split_k` or `producer_split_k`
// among roles (see above).
void split_roles(ir::Module& module);

}  // namespace tessel::transforms
