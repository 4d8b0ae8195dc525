// SplitConsumers: the K loop of a warp-specialized kernel divided among W consumer warpgroups of
// one block, their accumulators summed through shared memory — split-K without leaving the block.
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
// to a kernel whose block_grid is pinned `consumer_split_k = W` (2 <= W, and the block stays at
// most 1024 threads). The kernel has one consumer role (C threads) whose K loop
//   %acc = for %k = 0 to %n step 1 iter(%c = %zero) { aref_wait %ring, %k ... yield %c_next }
// waits on the rings the producer fills in order 0, 1, 2, ..., and carries only accumulators that
// mmas update. The role becomes W roles of C threads each, role w (threads first + w C ...):
//   %trips = div (%n + W - 1 - w), W                  its share: the K tiles k = w, w + W, ...
//   %acc = for %j = 0 to %trips step 1 iter(...) {
//     %k = add (mul %j, W), w                         the old loop index, everywhere it was used
//     ...                                             (aref sequence numbers included)
//   }
// Roles 1..W-1 keep what stands before their K loop and the loop; they end by handing their
// accumulators to role 0 through an aref of their own, filled by the role's threads:
//   %part_w = aref {slots = 1} : aref<shared<f32, (R,C):(C,1)>[R,C], ...>   (top level)
//   %b = aref_acquire %part_w, 0 ; copy %acc, %b {atom = st.shared.bN} ; aref_commit %part_w, 0
// and role 0, right after its loop, adds them in the order w = 1, 2, ... (deterministic):
//   %b = aref_wait %part_w, 0 ; %p = copy %b : register<f32, L> ; %acc = add %acc, %p ;
//   aref_release %part_w, 0
// before its epilogue, which only it runs. The block_grid's `threads` grows by (W - 1) C.
//
// Sequence numbers. The producer still acquires 0, 1, 2, ...; consumer role w waits for and
// releases w, w + W, ... in order (async.h: an aref's uses may alternate among consumer roles).
// Each ring's depth D is made a multiple of W (rounded down, at least W): then the uses of a slot,
// s, s + D, s + 2D, ..., all belong to one consumer role, and a role waiting on use n of a slot
// has waited on n - D itself, so the full barrier's phase n - D completed before anyone waits
// with n's parity (a parity wait cannot tell phase n from phase n - 2D). The grid is pinned
// `persistent = 0`: a persistent tile loop would shift the uses of a tile by its sequence base,
// and with K tiles not a multiple of W a slot's uses would change roles from tile to tile.
//
// Refused with a user error naming the op: W < 2 or not an integer, a block over 1024 threads,
// a kernel without roles or with more than one consumer role, no K loop `for %k = 0 to %n step 1`
// in the consumer role that waits on an aref, a K loop carrying a value that is not an mma's f32
// accumulator, aref ops of the consumer role outside the K loop before it, `persistent = 1` or a
// cluster on the same grid.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Splits the consumer role of every kernel of `module` pinned `consumer_split_k` (see above).
void split_roles(ir::Module& module);

}  // namespace tessel::transforms
