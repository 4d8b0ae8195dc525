// AlternateTiles: a persistent block's output tiles taken in turns by two consumer roles
// (CUTLASS's "ping-pong" persistent schedule), so that one consumer's epilogue runs while the
// other's mainloop keeps the tensor cores busy.
//
// Why. In a persistent warp-specialized GEMM the producer runs ahead across tiles, but the one
// consumer role still spends each tile's epilogue (the accumulators converted, activated, stored;
// an LSTM cell's gates and state update) with the tensor cores idle. The LSTM cell at hidden
// 8192 costs 3.5% over the plain GEMM of its shape on the H100, mostly that epilogue and the
// switch between its two K loops (bench/results/2026-11-28-lstm-gemm-gap-h100.md; issue 11's
// last unmet 1.2x point). With two consumer roles owning alternate tiles, role 1 runs tile t+1's
// mainloop while role 0 finishes tile t's epilogue. (Not the attention pass pingpong-consumers,
// which turns the wgmma issues of one tile's two warpgroups around.)
//
// What the pass does (on level-1 IR, after persistent and the passes that reshape the consumer's
// tile loop, before lower-arefs), to a kernel whose block_grid pins `alternate_tiles = true`:
// the one consumer role, whose region holds persistent's tile loop
//   for %tile = %first_tile to %tiles step %blocks iter(%base_i = %init_i) {
//     ...; yield (add %base_i, %count_i)...        (each count defined outside the loop)
//   }
// (or several such loops under kernel-wide branches: unswitch-loops' copies, each rewritten alike)
// becomes two copies of itself, roles c = 0 and 1 (the copy on the next free threads; the grid's
// `threads` grows by the role's), each marked `tile_turn = c`, whose loops take every other tile:
//   for %tile = %first_tile + c %blocks to %tiles step 2 %blocks
//       iter(%base_i = %init_i + c %count_i) { ...; yield %base_i + 2 %count_i }
// so every aref sequence number a tile uses is the one it used before (the producer is
// unchanged: it still loads every tile's K blocks in order, one stream of sequence numbers).
// A shared tensor the consumer allocates for itself (stage-stores' staging buffer) gets a copy
// for role 1: both roles' epilogues may run at once. Where the copies no longer fit beside the
// rings pipeline-arefs sized for one role, the deepest ring gives up slots until they do (down to
// the consumer's wgmma groups in flight plus one; a user error below that). overlap-epilogue
// leaves a kernel so pinned alone: the turns hide its stores already.
//
// The order of the mainloops. Two consumer roles that wait on the same ring in turns by tile
// break the rule a parity wait relies on (async.h): whoever waits for use n of a slot must know
// that use n - D completed, since its parity equals that of n - 2D. Role c may start tile t+1's
// waits while the producer has not yet filled the uses of tile t, which role 1 - c waits for.
// So the tiles hand a token on: an mbarrier of one arrival,
//   %tile_order = mbarrier_init {arrivals = 1} : mbarrier<1>          (top level)
// and in each role's tile body, with %turn = (%tile - %first_tile) / %blocks the tile's place in
// the block's order (0, 1, 2, ...; tile turn i completes the barrier's phase i):
//   mbarrier_wait %tile_order, 0, (%turn + 1) % 2      before the first op that waits on an aref
//                                                       (phase turn - 1 completed; turn 0 passes
//                                                       on the fresh barrier's "previous phase")
//   mbarrier_arrive %tile_order, 0 {by = one}           after the last op that waits on an aref
// Every use a tile waits for is then waited for only after every use of the tiles before it was
// (each wait of tile t - 1 returned before its role arrived), so when role c waits for use n the
// slot's use n - D has completed and the parity is unambiguous. The token's own parity is safe
// too: when tile t's role waits for phase t - 1, phase t - 2 (its own previous tile's arrival)
// has completed and phase t (its own arrival, to come) has not. The mainloops run one after the
// other, as the tensor cores can only serve one at a time; the epilogue of tile t runs beside the
// mainloop of tile t + 1 as far as its own aref waits allow (an epilogue operand waited for after
// the mainloop, e.g. an LSTM cell's state, holds the token until then).
//
// lower-arefs lowers the rings as for one consumer: each use is released by one role, the empty
// barrier counts one role's warpgroups; the rule that roles taking turns must divide a ring's
// slots does not apply to roles marked `tile_turn` (the token gives what it gave).
// check-protocol verifies the lowered protocol over interleavings like any other.
//
// Refused with a user error naming the op: a pin that is not true or false, a kernel with other
// than one producer and one consumer role, a consumer of more than one warpgroup (two of them
// beside the producer leave each thread 104 registers: a 128 x 256 GEMM tile's accumulators
// spill; pin `threads = 128` with a tile one warpgroup holds), an aref op of the consumer outside
// persistent's tile loops (`persistent = 0` pinned), a tile loop carrying a value that does not
// grow by a count defined outside it (grouped GEMM, MoE: tiles of different K trip counts),
// clusters, `consumer_split_k`, `pingpong = true` (turns inside a role) on the same grid, a block
// over 1024 threads, a shared tensor the consumer shares with another role.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Gives the tiles of every kernel pinned `alternate_tiles = true` to two consumer roles in turns
// (see above).
void alternate_tiles(ir::Module& module);

}  // namespace tessel::transforms
