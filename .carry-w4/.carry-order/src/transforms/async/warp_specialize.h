// WarpSpecialize: splits a kernel's mainloop into a TMA producer role and a consumer role connected
// by an aref (Tawa §III-C; the ops are those of src/ir/async.h, level 1).
//
// Without warp specialization every thread of a block issues its mainloop's TMA loads, waits for
// them and then runs the wgmma math, so load latency is hidden only as far as the emitter runs the
// loads ahead. Tawa gives the loads to a warpgroup of their own: a *producer* role that only
// computes addresses and issues TMA, running ahead of the *consumer* role — the warpgroups that
// synthesis sized the block for — as far as the ring of shared buffers between them allows. The
// ring is an aref; its depth and the consumer's wgmma overlap are pipeline-arefs' business, so this
// pass leaves `slots = 1` and synchronous mmas: its output is already correct, just not overlapped.
//
// Which kernels. sm_90a kernels (the block_grid's `target`, sm_90a when absent) with a *mainloop*
// (ir::is_mainloop: a `for` whose body copies global tiles into shared memory) that feeds a wgmma
// mma. Kernels with roles already, sm_80 kernels, and kernels without such a loop are left
// unchanged; so is a kernel whose block_grid pins `warp_specialize = false` (the non-specialized
// pipeline-loops path, kept for comparison). `warp_specialize = true` demands the split: a kernel
// that cannot have it is an error.
//
// Task-aware partitioning. The producer role gets, per mainloop, the TMA loads (`copy %tile :
// shared` with a `tma.` atom) and their address arithmetic: the backward closure of the loads'
// operands inside the loop body (`tile` ops and index arithmetic), and, ahead of its loops, the
// address ops outside the loop they need that do not stay at the top level. These are *cloned*:
// the consumer keeps whatever it uses too (a tile it also stores to, an index it compares). The
// consumer role gets everything else — the mmas, the SIMT work, the accumulators, the epilogue.
// Ops before the first mainloop that only compute indices, sizes and global views (size, const,
// scalar arithmetic, tile, global_view, the block_grid) stay at the top level where all threads
// run them — unless they read the block indices: those move into the roles with the rest, so that
// a later pass (persistent) can give each role its own block indices. The other ones (the
// accumulator `fill`, register loads) move into the consumer, as does every op after the first
// mainloop: once roles begin, every op belongs to one (async.h).
//
// Loop distribution. Each mainloop becomes two isomorphic loops over the same bounds and one aref
// whose slot holds a buffer per TMA load, typed as the load's result (Tawa's tuple-valued aref:
// one channel, one pair of barriers, because the tiles are consumed by the same mmas):
//   producer:  for %k { address ops; %bufs = aref_acquire %ring, %k; copy %tile_i, %buf_i {atom};
//                       aref_commit %ring, %k }
//   consumer:  %acc = for %k iter(...) { %bufs = aref_wait %ring, %k; the rest of the body, with
//                       the loads' results replaced by %bufs; aref_release %ring, %k; yield }
// When the loop reads an mma's result in its own iteration (attention), the loads consumed by
// different mmas get an aref each (%ring_k, %ring_v; union of loads read by a common mma), in
// the producer one acquire/copies/commit per aref in load order, in the consumer one wait and
// one release per aref: their slots are released at different times (K once S = Q Kᵀ retired,
// V once P·V did). Elsewhere (GEMM mainloops) one tuple aref: one barrier pair per slot.
// The loop index is the aref's sequence number, so the loop must run from 0 with step 1. The
// consumer loop keeps the original loop's attributes, among them a `stages` / `mma_in_flight` a
// person pinned for pipeline-arefs.
//
// Prologue operands. A TMA load into shared memory at the top level before the first mainloop
// whose tile is address arithmetic (attention's Q tile, read by every iteration's first mma) is
// the producer's too, through one more aref, `%prologue` (a tuple of one buffer per such load),
// once per output tile with sequence number 0 (persistent counts the tiles), ahead of the
// mainloop's loads:
//   producer:  %bufs = aref_acquire %prologue, %c0; copy %tile_i, %buf_i {tma};
//              aref_commit %prologue, %c0; ...mainloop...
//   consumer:  %bufs = aref_wait %prologue, %c0; ...mainloop reading them...;
//              aref_release %prologue, %c0   (after the last top-level op that reads a buffer
//                                             or a view of one)
// pipeline-arefs gives it 2 slots when the budget leaves room, so the next tile's Q lands while
// this tile's loop runs. In a persistent kernel the consumer could not issue such a load itself:
// its TMA load would sit in the tile loop beside the wgmmas, which no pass lowers.
//
// Epilogue operands. A tile loaded from global memory into registers after the last mainloop — a
// bias row (`copy tile(%bias, [256], [%bn]) : register`), a bias column, a C input scaled by
// beta — does not depend on K, and in the consumer its global latency is exposed once per output
// tile (a persistent kernel's consumer goes from the mainloop's last wgmma straight to it).
// Holding it in registers across the mainloop instead costs the accumulator's registers. So the
// producer loads it, by TMA, into a shared buffer of one more aref, `%epilogue` (a tuple of one
// buffer per such operand, row-major and unswizzled: "256:1", "(R,C):(C,1)"), once per output
// tile with sequence number 0 (persistent counts the tiles), after its mainloop loads:
//   producer:  ...mainloop...; %bufs = aref_acquire %epilogue, %c0;
//              copy %tile_i, %buf_i {atom = "tma.load.1d.box256"}; aref_commit %epilogue, %c0
//   consumer:  ...mainloop...; %bufs = aref_wait %epilogue, %c0;
//              %r_i = copy %buf_i {atom = "ld.shared.b32"} : <the copy's register type>;
//              role_sync; aref_release %epilogue, %c0
// The load is issued at least one ring's depth of K steps before the consumer needs it. The
// register tensor keeps the layout synthesis gave it (so a bias broadcast over the accumulator's
// rows stays register-local); each thread reads its values with the widest ld.shared that its
// layout's runs of consecutive elements allow. The role_sync is there because the release is one
// arrival per warpgroup (lower-arefs) while every thread reads the buffer. pipeline-arefs gives
// the aref 2 slots when the mainloop's ring leaves room (tile t + 1's operands land while tile t's
// are read), else 1.
// Which copies: `%r = copy %t : register<...>` at the top level after the last mainloop, where %t
// is a `tile` of a kernel argument whose address is address arithmetic over sizes, constants and
// block indices (as the producer's loop tiles), of rank 1 or 2 with static extents of 1..256, an
// inner extent of a multiple of 16 bytes, f16, bf16 or f32, padded with zeros if masked (TMA's
// fill), rows of a rank-2 tensor known by the facts to be 16-byte multiples, and at most
// kMaxEpilogueOperandBytes (1 KiB: what a 128x256 GEMM's ring of 4 x 48 KiB and staged epilogue
// leave; a bigger tile would cost the ring a slot). Any other copy — one whose tile depends on the
// accumulator, a 128x256 C tile, a non-zero pad — stays in the consumer, unchanged; this is an
// optimization, never an error. `tessel opt --report=epilogue` says for each copy where it went
// and why.
//
// Roles and threads. Producer: `{role = producer, first_thread = 0, threads = 128, issue = one}`
// (one elected thread issues TMA). Consumer: `{role = consumer, first_thread = 128, threads = T}`
// with T the block's threads before the pass: synthesis laid the register tensors out over T
// threads (256: two cooperative warpgroups, each holding half the accumulator's rows; 128: one)
// and those layouts stay valid over the consumer's threads numbered from 0. The block_grid's
// `threads` becomes 128 + T. A pinned `consumer_warpgroups` on the block_grid must equal T / 128
// (the layouts cannot be changed here; pin the tile or the layout instead).
//
// Loop-carried values. The consumer's loop carries what the mainloop carried: accumulators, and
// register tensors or scalars of its SIMT work (attention's running row max and row sum). The
// producer's loop carries nothing. pipeline-arefs decides whether the mmas may go asynchronous
// (only when nothing but the next mma and the yield reads an mma's result in the iteration).
//
// Refusals (a user error naming the op, rather than a silent miscompile): a mainloop copy into
// shared memory without a TMA atom (the producer issues loads from one thread); a loop-carried
// shared or global tensor (one role cannot see what the other's loop writes);
// a mainloop nested in other control flow (roles stand at the top level); a TMA tile whose address
// depends on accumulators or other non-address values (the producer computes only addresses); a
// loop not starting at 0 with step 1; a block that is not one or two whole warpgroups.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Splits every eligible kernel of `module` into a producer and a consumer role connected by one
// aref per mainloop (rules above); UserError for a kernel it must refuse.
void warp_specialize(ir::Module& module);

}  // namespace tessel::transforms
