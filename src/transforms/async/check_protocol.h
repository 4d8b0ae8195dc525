// CheckProtocol: the barrier protocol of a kernel after lower-arefs or lower-mainloops, checked at
// compile time so that a broken protocol is an error naming the barrier and the op, never a hang
// on the GPU.
//
// Method: a bounded model check. The kernel's synchronization skeleton — its roles, loops and
// branches with their index arithmetic, mbarrier_init / wait / arrive / expect_tx, TMA loads
// (copy_async) into ring slots, register copies into slots (split-roles' hand-over: a write that
// has landed when the copy is done, published by the threads' arrivals), the slot buffers' readers (any op using an aref_slot result, an
// async mma until the mma_wait that retires its wgmma group) — is executed on concrete sizes,
// each role as a coroutine that blocks at a wait it cannot pass, every barrier an explicit phase
// model (ir::BarrierModel, shared with the interpreter: a fresh barrier's parity-1 phase counts
// as complete, HOPPER.md §5). Why a model check and not a proof: slots and parities are
// arithmetic on sequence numbers that persistent kernels carry across tiles, with branches on
// sizes; running the skeleton follows whatever the passes emit, and the defects are small-scope
// ones — they show within a few trips around the ring depth.
//
// What runs, per kernel (a block is cheap: the skeleton only; ~0.05 s for a GEMM):
//   - sizes: every size symbol takes 1, 136, 200, 320, 520 (rounded up to its facts' divisor),
//     all combinations; then one symbol at a time takes the sizes that give each loop dividing it
//     (`cdiv %S, c`) 1, 2, D - 1, D, D + 1, 2D + 1 and 3D + 2 trips, with a full and a partial
//     last tile, for each ring depth D in the kernel (where a ring first wraps, a parity first
//     flips back, and past) — the other symbols at their smallest and at their second values
//     (one tile; a few tiles per SM, so a persistent kernel's sequence numbers cross tiles). A
//     loop bound that is not a compile-time constant thus takes all those trip counts; zero trips
//     cannot happen (sizes are positive) except for a persistent block without tiles (3 SMs);
//   - sm_count 1 and 3, the first and the last block of the grid;
//   - schedules: producer first and consumer first (each role runs as far as it can before the
//     next), round-robin (one visible op each in turn), each with TMA loads landing at once or
//     only when nothing else can move (as late as possible);
//   - a search over all interleavings, on small instances (each symbol at D + 1 trips, the others
//     smallest; every symbol at 2 trips): depth first over the roles' visible ops (those touching
//     a barrier, a slot or a wgmma group; the others commute with everything) and the loads'
//     landings in issue order. A role's control flow depends only on sizes, block indices and
//     its own loop variables, so a state is the number of ops each role executed plus the loads
//     landed; each is explored once, at most 4000 per instance. It finds what no fixed order
//     shows: a release moved before the mma_wait, where the producer must load between them.
//
// Reported (UserError at the op, naming the barrier or ring slot, the sizes, the schedule and
// how far each role had come):
//   - a deadlock: every unfinished role waits on a phase nothing left can complete — a missing
//     arrive, a wrong parity, a ring too shallow for the wgmma groups kept in flight, a role that
//     ends while another still waits for it (a consumer running an iteration more than its
//     producer); each blocked role with its barrier, parity and phase;
//   - too many arrivals in a phase (an arrive count that does not match `arrivals`: `by =
//     warpgroup` in a 256-thread role is 2 arrivals), or bytes beyond those expected;
//   - a ring slot read before the TMA load for it landed (a wait that passed a phase a later
//     arrive or load was to complete: wrong parity or too few expected bytes), or after a newer
//     load into it was issued;
//   - a ring slot loaded while an earlier use of it is still read (a release before the mma_wait
//     retiring the wgmma group that reads it, or a load not waiting on empty);
//   - a ring slot loaded by TMA while an ordinary (generic-proxy) read of its previous TMA load
//     has no fence_proxy_async after it in the reading role (the release let the async-proxy
//     write overtake the read: HOPPER.md, W4A16's weight tiles);
//   - a slot loaded and never read by the end of the block (a producer running more iterations
//     than its consumer: its wait on empty passes, the consumer having released the slot's
//     previous use, and the load may be in flight when the block exits).
// A kernel without roles that has mbarriers (a mainloop lowered by lower-mainloops: one ring that
// the block both loads and reads) is checked as one role of the block_grid's `threads` running
// the whole kernel body: it is the consumer of its own loads, its arrivals count as for a role of
// that many threads (`by = warp`: one per warp), and a `by = one` wait blocks it like any wait.
// Running the block's threads in lockstep is enough for that kernel's protocol, though it cannot
// show one warp running iterations ahead of another: a warp reaches a slot only through its own
// wait on the full barrier, a slot's empty phase completes only once every warp has released
// it (each after the mma_wait retiring its reads, in its own program order), and only the
// thread that made the `by = one` wait loads into it; so what the protocol rests on is each
// thread's own order of waits, reads and releases, which the lockstep run checks
// (lower_mainloops.h has the argument).
// What it assumes: branches and loop bounds depend only on sizes, constants, block indices and
// loop variables (the forms the passes make); anything else is reported as something the check
// cannot follow — except split-k's `counter_arrive`, whose count depends on other blocks: each
// instance runs twice, every arrival of the block the last (it sums and runs the epilogue) and
// every arrival not the last (it skips both). Blocks whose units mix the two outcomes are not
// run; the branch holds no barrier or ring op (split-k refuses an aref op there), only role
// syncs and TMA store groups, waited for by count and drained after the tile loop. It does not model the emitter's contracts (which thread issues) or memory
// consistency beyond the barrier's. Clusters (multicast-loads) are checked by symmetry: the
// blocks of a cluster run the same program on adjacent tiles, so one block is run and its peers
// are taken to mirror it — an arrival with `cluster` counts once per block of the cluster, and a
// multicast load lands its whole buffer (the peers' shares arrive with its own); `cluster_rank`
// is the block's index modulo the cluster size. What symmetry cannot show (a peer that exits
// early) the interpreter, which runs a cluster's blocks together, does. Kernels without mbarriers
// pass untouched.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Checks the barrier protocol of every kernel of `module` (see above); UserError on a violation.
void check_protocol(ir::Module& module);

}  // namespace tessel::transforms
