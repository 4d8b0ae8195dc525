// LowerArefs: arefs become mbarriers with phase parity, arrive counts and transaction bytes, and
// the roles get their register split (setmaxnreg) — level 1 of src/ir/async.h to level 2.
//
// An aref of D slots (its `slots`) with a TMA producer becomes, right after the aref op:
//   %full  = mbarrier_init {arrivals = 1} : mbarrier<D>    the producer's expect_tx is the one
//                                                          arrival; the TMA bytes complete it
//   %empty = mbarrier_init {arrivals = W} : mbarrier<D>    one arrival per consumer warpgroup
// and one `block_sync` before the first role publishes the initialized barriers. Sequence number
// n uses slot n % D in its round n / D; the k-th completion of a barrier's phase has parity k % 2,
// and a fresh barrier counts its "previous" phase (parity 1) as complete (HOPPER.md §5). So:
//   aref_acquire %r, %n    ->  mbarrier_wait %empty, n % D, 1 - (n / D) % 2   (round r waits for
//                              the release of n - D, the empty barrier's r-th completion; round 0
//                              passes on the fresh barrier)
//                              %bufs = aref_slot %r, n % D
//                              mbarrier_expect_tx %full, n % D {bytes = the slot's bytes}
//   copy %tile, %buf       ->  copy_async %tile, %buf, %full, n % D   (each TMA copy into the slot)
//   aref_commit %r, %n     ->  nothing: the full barrier's phase completes when the expect_tx
//                              arrival and all the bytes have come
//   aref_wait %r, %n       ->  mbarrier_wait %full, n % D, (n / D) % 2 ; %bufs = aref_slot ...
//   aref_release %r, %n    ->  mbarrier_arrive %empty, n % D {by = warpgroup}
// The index arithmetic is IR (rem, div, sub on constants made at the top level), so the protocol
// check and the emitter see every slot and parity.
//
// The register split: a warpgroup's registers can move to another at run time (setmaxnreg), and
// a producer that only issues TMA needs few. The producer role starts with
// `setmaxnreg {count = 40, mode = dec}`; a consumer role with `mode = inc` to the largest multiple
// of 8 (at most 256) such that all roles fit in the SM's 65536 registers, when that is more than
// the compiler may give every thread of the block (65536 / threads, below 256, in steps of 8):
// 232 for a 384-thread block of one producer and two consumer warpgroups.
//
// Refused with a user error naming the aref and the op: an aref used by more than one producer
// or consumer role, a slot buffer not filled by exactly one TMA copy between acquire and commit
// (a producer that is not TMA is not lowered yet), an aref op outside a role.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Lowers every aref of `module` to mbarriers (see above).
void lower_arefs(ir::Module& module);

}  // namespace tessel::transforms
