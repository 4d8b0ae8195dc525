// LowerArefs: arefs become mbarriers with phase parity, arrive counts and transaction bytes, and
// the roles get their register split (setmaxnreg) — level 1 of src/ir/async.h to level 2.
//
// An aref of D slots (its `slots`) with a TMA producer becomes, right after the aref op:
//   %full  = mbarrier_init {arrivals = 1} : mbarrier<D>    the producer's expect_tx is the one
//                                                          arrival; the TMA bytes complete it
//   %empty = mbarrier_init {arrivals = W} : mbarrier<D>    one arrival per consumer warpgroup
//                                                          (per consumer thread when its threads
//                                                          read the buffers: see below)
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
// When the consumer's threads read a slot's buffers themselves (a register copy for a row
// reduction over the A tile a wgmma also reads) with no role_sync between the read and the
// release, one arrival per warpgroup would free the slot while other warps of the warpgroup may
// still be reading it (the arriving thread's wgmma wait orders only the tensor cores' reads):
// the empty barriers then count every consumer thread and each thread arrives, `{by = thread}`,
// after its own reads (an arrive releases what the arriving thread did before it). That the
// loaded values feed a wgmma (W4A16's dequantized weights, an RS wgmma's A) does not retire
// the reads: coarse-pipeline's operand form releases the weight slot right after the dequant,
// before the wgmma that reads the registers is issued, let alone waited for.
// A slot that TMA fills and the consumer's threads read (with or without a role_sync) also gets
// `fence_proxy_async` before each release, and every thread fences and arrives itself: the
// threads read through the generic proxy what the async proxy wrote, and the mbarrier orders
// the threads, not the proxies, so the producer's next TMA load into the slot could otherwise
// land before the reads are done (W4A16's weight tiles were overwritten early in most launches
// under split-k with two blocks an SM; bench/results/2026-11-27-split-k-repeat-h100.md).
// Roles taking turns (split-roles: R roles of a side, the i-th using i, i + R, ...) change
// nothing above: each sequence number is still committed by one producer and released by one
// consumer role, so the arrival counts are one role's (the roles of a side must be alike). A slot
// filled by the acquiring role's threads instead of TMA (register copies: split-roles' hand-over
// of partial accumulators) has a full barrier counting that role's threads, each arriving at the
// commit after its own stores (`mbarrier_arrive %full, n % D {by = thread}`: the arrive releases
// the stores to the waiting role), and no expect_tx.
// The index arithmetic is IR (rem, div, sub on index constants at the top level, the kernel's
// own where it has them, else new ones before the roles), so the protocol check and the emitter
// see every slot and parity.
//
// The register split: a warpgroup's registers can move to another at run time (setmaxnreg), and
// a producer that only issues TMA needs few. The rule, for a block of T threads of which P are
// producers and C consumers:
//   entry = min(255, 65536 / T) rounded down to a multiple of 8   what ptxas gives every thread
//                                                                 under __launch_bounds__(T, 1)
//   pool  = entry * T                                             the block's registers; setmaxnreg
//                                                                 only moves registers inside it
//                                                                 (an inc it cannot serve waits
//                                                                 forever)
//   consumer = min(256, (pool - 40 * P) / C rounded down to a multiple of 8)
// (48 instead of 40 when the producer is several roles taking turns, split-roles: its stride
// arithmetic spilled at 40)
// The producer role starts with `setmaxnreg {count = 40, mode = dec}`, every consumer role with
// `setmaxnreg {count = consumer, mode = inc}` (PTX allows 24..256 in steps of 8), when consumer
// is at least entry + 8 (otherwise the split gains nothing and is left out). Examples: 384
// threads (one producer and two consumer warpgroups): entry 168, pool 64512, consumers 232
// (CUTLASS's 40/232); 256 threads (one consumer warpgroup): entry 248, consumers 256; 640 threads
// (four consumer warpgroups): entry 96, pool 61440, consumers 104 (a rule against 65536 instead
// of the pool would ask for 112, and the inc would wait forever for registers the block lacks).
// FlashAttention-3's 24/240 for two consumer warpgroups fills the same 64512-register pool exactly.
//
// Refused with a user error naming the aref and the op:
//   - an aref_commit of a TMA-filled slot whose buffers were not all filled, between its
//     aref_acquire and it, by one TMA copy each (a copy from global memory without a `tma.load`
//     atom, a buffer filled twice or not at all): a producer of generic copies from global
//     memory is not lowered yet; slots filled both by TMA and by register copies;
//   - an aref_acquire without an aref_commit of the same sequence number after it in its block;
//   - an aref used by only one side; roles taking turns on a side that differ in size, or whose
//     count does not divide the ring depth; several roles filling slots by register copies;
//   - roles malformed for lowering: acquire/commit of a TMA-filled slot outside a `role =
//     producer` role, wait/release outside a `role = consumer` role, a TMA producer role that is
//     not `issue = one` (its expect_tx must be the full barrier's single arrival), slots filled
//     by register copies in an `issue = one` role (one thread runs it), an aref used by an op
//     other than the four.
// Arefs that only aref_slot uses (already lowered) and kernels without arefs are left unchanged.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Lowers every aref of `module` to mbarriers (see above).
void lower_arefs(ir::Module& module);

}  // namespace tessel::transforms
