// LowerMainloops: a TMA + wgmma mainloop pipelined without warp specialization becomes level-2
// ops of src/ir/async.h — its ring of slots, their full and empty mbarriers, every wait, arrival,
// expect_tx and TMA load, with slots and parities as index arithmetic — so that the emitter
// translates it op by op (emit_async.cpp) and check-protocol checks it, as for warp-specialized
// kernels. There is one way to emit barriers: the emitter invents none.
//
// Which loops. In a kernel without roles (warp-specialize left it alone: its block_grid pins
// `warp_specialize = false`, or it was not eligible), every mainloop (ir::is_mainloop) whose
// copies into shared memory are TMA loads feeding wgmma mmas — the loops that pipeline-loops gave
// `stages = S` and `mma_in_flight = G` (absent: S = 1, G = min(1, S - 1)). Kernels with roles are
// lower-arefs' business; a mainloop of cp.async copies and mma.sync (the sm_80 path,
// emit_cp_async_mma.cpp) is left alone: it has no mbarriers.
//
// What it writes, for `%acc = for %k = 0 to %T step 1 iter(...)` whose body loads L_1..L_m
// (`%x_i = copy %tile_i {atom = "tma.load..."} : shared<...>`), with A = S - G (how far ahead the
// loads run: D - 1 iterations for a ring of D = S slots and one group in flight):
//   before the loop, at the top level:
//     %ring = aref {slots = S} : aref<the loads' shared types>   the slots; used only through
//                                                                aref_slot (already lowered)
//     %ring_full = mbarrier_init {arrivals = 1} : mbarrier<S>     the expect_tx, plus the bytes
//     %ring_empty = mbarrier_init {arrivals = W} : mbarrier<S>    W = the block's warps
//     block_sync
//     for %n = 0 to A { if %n < %T { LOAD(%n) } }                 the prologue
//   the body of iteration k:
//     mbarrier_wait %ring_full, k % S, (k / S) % 2
//     %x_1, ..., %x_m = aref_slot %ring, k % S                    in place of the loads
//     the body's other ops (transposes, mmas), every wgmma mma now `async`
//     mma_commit ; mma_wait {pending = G}
//     if k >= G { mbarrier_arrive %ring_empty, (k - G) % S {by = warp} }   (no `if` when G = 0)
//     if k + A < %T { LOAD(k + A) }
//   after the loop: mma_wait {pending = 0}
//   LOAD(n): the loads' address ops (tiles and index arithmetic of the body) cloned with k = n;
//     mbarrier_wait %ring_empty, n % S, 1 - (n / S) % 2 {by = one}
//     %bufs = aref_slot %ring, n % S
//     mbarrier_expect_tx %ring_full, n % S {bytes = the slot's bytes}
//     copy_async %tile_i, %buf_i, %ring_full, n % S {the load's atom}      (i = 1..m)
// The expect_tx and the TMA loads are made by one thread (the emitter's contract for them
// outside an `issue = one` role), and so is the wait before them (`by = one`). The loop's
// `stages` and `mma_in_flight` are removed (realized); the loop is no longer a mainloop.
//
// Why it is correct. Sequence number n (the loop index of the iteration that reads it) uses slot
// n % S in round r = n / S; each barrier of the ring completes one phase per round, and the
// r-th completion has parity r % 2 (a fresh barrier's parity 1 counts as complete, HOPPER.md §5).
//   - Full. The wait for n passes at full[n % S]'s completion of round r: the one expect_tx
//     arrival and the bytes of every load of n, so the data has landed. It cannot pass on a
//     different round's completion: round r - 1's was consumed by this warp's own wait for n - S,
//     and round r + 1's needs the load of n + S, which waits (below) for every warp's release of
//     n, which each warp makes after its wait for n.
//   - Empty. The load of n overwrites the slot that n - S used. Its wait needs empty[n % S]'s
//     completion of round r - 1 (parity 1 - r % 2; round 0 passes on the fresh barrier): W
//     arrivals, one from each warp releasing n - S. A warp releases n - S in iteration n - S + G,
//     after its `mma_wait {pending = G}` there, which retires every wgmma group committed up to
//     iteration n - S (one group per iteration, in order); the slot's only readers are those
//     wgmmas (the transposes are views), so no warp still reads it. Each warp arrives after its
//     own wait: the arrival count does not assume that one warp's wgmma.wait_group retires its
//     warpgroup's reads. The load of n = k + A is made in iteration k after the same thread's
//     release of k - G = n - S, in program order.
//   - Progress. The thread that loads waits, in iteration k, for every warp's release of k - G,
//     which each warp makes in its own iteration k before it can wait on anything that thread
//     issues later (the full barrier of k + 1 was loaded in iteration k + 1 - A <= k). The loads
//     are issued only for n < T, so every slot loaded is waited for and read before the block
//     exits; the last G sequence numbers are never released because no load waits for them.
//   - The accumulators are read after the loop only after `mma_wait {pending = 0}`.
// check-protocol runs on the result (one role of the block's threads; check_protocol.h).
//
// Work in registers between the wgmmas (the FlashAttention-2 schedule: attention pinned
// `warp_specialize = false`, the softmax reading S = Q·Kᵀ before P·V). Besides the GEMM body's
// ops the loop may hold ops whose results are scalars or register tensors and that write no
// memory (elementwise, fill, iota, reduce, broadcast, cast, select, copies into registers, and
// `if`s of them, such as specialize-masks' branches). Then pipeline-loops has left
// `mma_in_flight = 0` (read_before_retire in atom_queries.h), and the mmas stay synchronous:
// no `async`, no commit or wait in the body (each synchronous wgmma is issued, committed and
// waited for where it stands, so it has retired before anything reads its result or its slot),
// and each warp's release of slot k closes iteration k (before the refill, as with G = 0 above).
// The carried values are then unrestricted (the running max, sum and rescaled output of
// attention are read by register work). mma_in_flight > 0 with such work is refused.
//
// Loads outside loops (attention's Q tile: `%q = copy %tq {atom = "tma.load..."} : shared<...>`
// at the top level) become a ring of one slot used once:
//   %q_once = aref {slots = 1} ; %q_full = mbarrier_init {arrivals = 1} : mbarrier<1> ; block_sync
//   %q = aref_slot %q_once, 0 ; mbarrier_expect_tx %q_full, 0 {bytes} ; copy_async ... %q_full, 0
//   mbarrier_wait %q_full, 0, 0
// The full barrier's first phase (parity 0) is the load's landing; nothing loads into the slot
// again, so there is no empty barrier. A kernel without roles is one block per tile (persistent
// needs roles), so the load runs once per block.
//
// The design: one role, both sides of one ring, written at level 2 directly. The alternative —
// wrap the kernel in a warp_group that is both producer and consumer of a level-1 aref and let
// lower-arefs lower it — was rejected: level 1 cannot say that only one thread of a role acquires
// (lower-arefs' producer is a whole `issue = one` role; every thread waiting on empty would make
// the ring a block-wide barrier per iteration, one the old emitter did not have); lower-arefs'
// rules are per role (one full/empty pair between two roles, empty arrivals per consumer
// warpgroup, the register split), so a role on both sides would be a special case in each; and a
// warp_group changes the kernel around the loop (role-local thread indices, one block per SM).
// What the two lowerings share is the level they write and its rules: the aref ring allocated by
// the emitter and read through aref_slot, full barriers of one arrival plus the bytes, empty
// barriers of one arrival per releasing group, slot n % D and parities (n / D) % 2 and
// 1 - (n / D) % 2 of the sequence number (lower_arefs.h), all checked by the same protocol check.
// The one addition to level 2 is `mbarrier_wait {by = one}`: a wait made by one thread of the
// block while the others go on.
//
// Refused with a user error naming the loop or the op (the emitter's own mainloop, which this
// pass replaced, refused the same forms): a TMA mainloop nested in other control flow (its barriers are made at the top level,
// where every thread runs); a loop that does not count from 0 in steps of 1 (the loop index is
// the sequence number); `stages` / `mma_in_flight` other than 1 <= S <= 64, 0 <= G <= 7, G < S;
// a copy into shared memory that is not a TMA load of a global tile made in the loop body; an op
// in the body other than the loads' address arithmetic, transposes of shared tiles, wgmma mmas,
// work in registers and the yield; work in registers with mma_in_flight > 0; without work in
// registers, a loop-carried value that is not the accumulator of one wgmma mma yielded as its
// result (the mmas become asynchronous); a loop without a wgmma mma; a block_grid without
// `threads` (layout synthesis writes it; the empty barriers count the block's warps). A TMA
// mainloop that reaches the emitter unlowered is refused there (emit.cpp).
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Lowers every TMA + wgmma mainloop of every kernel without roles in `module` (see above).
void lower_mainloops(ir::Module& module);

}  // namespace tessel::transforms
