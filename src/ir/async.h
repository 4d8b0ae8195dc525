// Asynchrony as IR: warp roles, arefs, mbarriers and wgmma groups — their ops, text and rules.
//
// A tile program says what one block computes, in program order. Warp specialization (paper 001,
// Tawa, §III) splits it into *roles* — groups of warps that run different code at the same time —
// connected by *arefs*. Everything that makes that work is an op of this IR, created by passes
// (src/transforms/async/), printed, parsed, verified (verify_async.cpp), run by the interpreter
// with the roles interleaved, and translated op by op by the emitter. Two levels:
//
// Level 1, arefs (made by warp-specialize; depths set by pipeline-arefs):
//
//   %ring = aref {slots = D} : aref<shared<f16, L1>[128,64], shared<f16, L2>[256,64]>
//       A ring of D slots in shared memory; each slot holds one buffer of each listed type. Made at
//       the top level of a kernel, before its roles. `slots` is 1 until the pipeline pass decides.
//   warp_group {role = producer, first_thread = 0, threads = 128, issue = one} { ... }
//   warp_group {role = consumer, first_thread = 128, threads = 256} { ... }
//       A role: threads [first_thread, first_thread + threads) of the block run the region, all at
//       once with the kernel's other roles (threads is a multiple of 128: setmaxnreg acts on whole
//       warpgroups). Register tensors in the region have thread-value layouts over the role's
//       threads, numbered from 0. `issue = one`: the region is run by one elected thread of the
//       role (a TMA producer), the others idle. A role has no results; roles communicate only
//       through arefs (level 1) or barriers and shared memory (level 2). Roles sit at the top
//       level of the kernel, after every op that all threads run; the block_grid op's `threads`
//       is the sum of its roles' threads.
//   %a, %b = aref_acquire %ring, %n : shared<...>, shared<...>    (producer)
//       Waits until slot n % D is free — its previous use, sequence number n - D, was released —
//       and returns the slot's buffers, which the producer then fills (copy into them).
//   aref_commit %ring, %n                                          (producer)
//       The slot of sequence number n holds its data. (Tawa's `put` is acquire + copy + commit.)
//   %a, %b = aref_wait %ring, %n : shared<...>, shared<...>        (consumer)
//       Waits until sequence number n was committed, returns the slot's buffers. (Tawa's `get`.)
//   aref_release %ring, %n                                         (consumer)
//       The consumer is done reading sequence number n; its slot may be reused. (`consumed`.)
//   The sequence number %n is an index value: each role that uses an aref uses numbers 0, 1, 2, ...
//   in order (in a persistent kernel they keep counting across tiles). Slot and phase are derived:
//   slot n % D, phase n / D. One producer role and one consumer role per aref, or R roles of a side
//   taking turns (split-roles, src/transforms/async/split_roles.h): the i-th of them in kernel
//   order uses i, i + R, i + 2R, ... in order, and R divides D, so that every use of a slot belongs
//   to one role of each side. Or two consumer roles marked `tile_turn = 0 / 1` that take a
//   persistent block's tiles in turns (alternate-tiles, src/transforms/async/alternate_tiles.h):
//   their waits are ordered by an mbarrier token handed on from tile to tile, which gives the
//   same guarantee for any D. A slot is filled by TMA copies in an `issue = one` producer role, or
//   by register copies of the acquiring role's threads (split-roles' hand-over of partial
//   accumulators from one consumer role to another).
//
//   mma_commit                   closes the group of wgmma-backed mma ops issued since the last
//                                commit (wgmma.commit_group).
//   mma_wait {pending = P}       waits until at most P committed groups are in flight
//                                (wgmma.wait_group P).
//       An mma with a wgmma atom and the `async` attribute runs asynchronously: it reads its shared
//       operands at any time until the mma_wait that retires its group, and its result may be used
//       only by the next async mma (as its accumulator), by a yield, or after that mma_wait. An
//       mma without `async` completes before the next op. The pipeline pass makes mmas async and
//       moves aref_release of sequence number n to after the wait that retires n's group.
//
// Level 2, barriers (made by lower-arefs, and by lower-mainloops for a TMA mainloop without
// roles; after them the IR names every barrier and every wait):
//
//   %full = mbarrier_init {arrivals = 1} : mbarrier<D>
//       D mbarriers in shared memory, each completing a phase when `arrivals` arrivals (and every
//       expected transaction byte) have come. Top level of the kernel; thread 0 initializes them.
//   block_sync                   every thread of the block (__syncthreads): after mbarrier_init;
//                                outside every role (under scalar if / for: block-uniform).
//   %bufs... = aref_slot %ring, %s : shared<...>, ...   the buffers of slot %s (no waiting).
//                                         `{held}`: a second view of the load the role waited for
//                                         in this slot and has not released (rotate-tiles);
//                                         check-protocol counts its reads as that load's.
//   mbarrier_wait %bars, %i, %parity      waits until the phase of bars[i] with that parity
//                                         (0 or 1) completed; a fresh barrier's "previous phase"
//                                         (parity 1) counts as completed (HOPPER.md §5).
//                                         Every thread of the role (or block) waits; with
//                                         `{by = one}` only the thread that then issues the
//                                         loads does, and the others go on (lower-mainloops:
//                                         the block's one loading thread waits for a free slot).
//   mbarrier_arrive %bars, %i {by = warpgroup}   one arrival on bars[i] from each warpgroup of the
//                                         role (`by = warp`: each warp; `thread`: each thread;
//                                         `one`: one thread of the role; in an `issue = one`
//                                         role, always the one elected thread's arrival).
//   mbarrier_expect_tx %bars, %i {bytes = B}     one arrival that also expects B more bytes
//                                         (`no_arrival`: the bytes only, for loads issued ahead
//                                         of the arrival that completes the phase).
//   copy_async %tile, %dst, %bars, %i {atom = "tma.load..."}   a TMA load of a global tile into a
//                                         shared buffer that completes its bytes on bars[i].
//   copy_async %tile, %dst {atom = "cp.async.cg.shared.global.b128"}   a global tile into a
//                                         shared tensor by every thread of the block, 16 bytes a
//                                         cp.async (vectors outside the tensor get the tile's pad
//                                         by a plain store); `copy_async_wait {pending = 0,
//                                         threads}` waits for the thread's own, a block_sync
//                                         after it for everyone's (schedule-rows' rows fetched
//                                         whole into shared memory). `from_line` (a tile of one
//                                         row): the threads' accesses counted from the 128-byte
//                                         line the tile starts in, so that a warp reads whole
//                                         lines; what lands where is the same.
//   setmaxnreg {count = 40, mode = dec}   the role's per-thread register budget (first op of a
//                                         role: producer down, consumers up); every warp of the
//                                         role runs it, also in an `issue = one` role.
//
// Stores through shared memory (made by stage-stores): `slice` (a static part of a register
// tensor), `copy %reg, %buf {atom = "stmatrix.x4.b16"}`, `fence_proxy_async` (the role's generic
// writes to shared memory become visible to TMA), `role_sync` (a barrier of the role's threads),
// `copy_async %buf, %tile {atom = "tma.store..."}` (one thread of the role sends the buffer; it
// completes in that thread's bulk async-group), `copy_async_commit`, and
// `copy_async_wait {pending = N}` (until at most N groups still read their buffers). With
// `{by = warpgroup}` on role_sync, the store, its commit and wait, each warpgroup of the role does
// them for its own rows: a barrier of its 128 threads; thread 0 of warpgroup w sends rows
// [w R/W, (w+1) R/W) of the R-row buffer into the same rows of the tile (the atom's box is that
// share), in its own bulk async-group. Results are the same; only who waits for whom changes.
//
// Turns (made by pingpong-consumers): the order in which the W warpgroups of one role (W >= 2)
// issue their tensor-core work, so that one warpgroup's SIMT work runs while another's wgmmas
// use the tensor cores (FA3's ping-pong schedule). Turns go around warpgroups 0, 1, ..., W-1, 0..
//   turn_begin                   once, before the role's first turn_wait: hands the first turn
//                                to warpgroup 0 (warpgroup W-1 passes it).
//   turn_wait                    each warpgroup waits until the previous one passed it the turn.
//   turn_pass                    each warpgroup passes the turn to the next one (without
//                                waiting). Between its turn_wait and turn_pass a warpgroup holds
//                                the turn: it issues wgmmas there and never waits on them.
//   Every warpgroup of the role runs the same sequence of waits and passes (the ops stand in the
//   role's uniform control flow). The emitter makes them named barriers of 2 x 128 threads, one
//   per warpgroup: a wait is bar.sync on the waiting warpgroup's, a pass bar.arrive on the next
//   one's. They order issue, not data: results never depend on them.
//
// Clusters (made by cluster-blocks, persistent and multicast-loads; src/transforms/): blocks
// grouped into thread-block clusters share each other's shared memory and barriers.
//   block_grid ... {cluster = [2]}          blocks per cluster along each grid dimension (the
//                                           launch's cluster dimensions; `auto` before
//                                           cluster-blocks decides)
//   %r = cluster_rank : index               the block's rank in its cluster (%cluster_ctarank)
//   copy_async %tile, %buf, %bars, %i {atom = "tma.load.2d.box(R/C)x...", multicast}
//                                           block r of the C blocks loads rows [r R/C, (r+1) R/C)
//                                           of the R-row tile into the same rows of %buf (an
//                                           aref_slot result: the same offset in every block) in
//                                           every block of the cluster, completing the share's
//                                           bytes on each block's bars[i]
//   mbarrier_arrive %bars, %i {by = warpgroup, cluster}
//                                           the arrival goes to bars[i] of every block of the
//                                           cluster (this one included)
//   cluster_sync                            every thread of every block of the cluster; at the
//                                           top level after the barriers' init (publishes them to
//                                           the peers) and as the kernel's last op, after the
//                                           roles (no block exits while a peer may still arrive
//                                           on its barriers or write its slots)
//
// Workspaces (made by split-k, src/transforms/schedule/split_k.cpp): global memory that the
// launch provides, through which the blocks of one launch meet.
//   %ws = workspace %n : global<f32>[M,N]   at the top level, before the roles: %n tensors of the
//                                           result type one after another (row-major), which the
//                                           launch allocates (it evaluates %n from sizes,
//                                           constants and sm_count, like the grid). Zero when
//                                           first allocated and reused by later launches: a
//                                           kernel that counts in it leaves it zero again
//                                           (counter_arrive does). The result is tensor 0.
//   %t = workspace_part %ws, %i : global<f32>[M,N]
//                                           tensor i (< n) of the workspace
//   %k = counter_arrive %c, %n : index      %c is a global<i32>[1] (a workspace part). Every
//                                           thread that runs the op (its role, or the whole block
//                                           outside roles) has made its earlier global writes
//                                           visible at GPU scope (release); then the counter is
//                                           incremented once for all of them, wrapping to 0 at
//                                           n, and every thread gets the count before the
//                                           increment; later reads see the writes of every block
//                                           that arrived before (acquire). So the n-th arrival
//                                           (k == n - 1) sees the others' writes and leaves the
//                                           counter zero. Nothing waits: a block that is not
//                                           last goes on, and no launch can deadlock on it.
//
// Launches that overlap (made by overlap-launches, src/transforms/async/overlap_launches.cpp):
// a launch may start while the launch before it on the stream still runs (programmatic dependent
// launch: the runtime launches a kernel that holds a grid_wait with the programmatic stream
// serialization attribute).
//   launch_dependents                       the next launch may start (its blocks take SMs as
//                                           they free up); nothing about this launch's memory
//                                           is promised to it by this
//   grid_wait                               the thread waits until the launch before this one has
//                                           finished and its memory writes are visible; a no-op
//                                           when the launch did not overlap. Every thread runs it
//                                           before its first access to global memory other than
//                                           reads of the kernel's ready(...) parameters
//   prefetch %tile {atom = "tma.load..."}   one thread asks for the tile (of a ready parameter)
//                                           in L2, as the TMA load of that atom would read it,
//                                           and does not wait
//
// Level 2 is what the protocol check (check-protocol) reasons about, and what the emitter
// translates: mbarrier ops become tessel::device::mbarrier_* calls, copy_async a TMA load, and so
// on; the emitter adds no wait or arrive of its own.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tessel::ir {

// Whether `kind` is one of the ops above (warp_group through prefetch; not slice, a plain op,
// nor cluster_rank, which reads the machine like sm_count).
bool is_async_op(OpKind kind);

// Whether `kind` takes an aref's sequence number: aref_acquire, aref_commit, aref_wait,
// aref_release (not aref_slot, which names a slot).
bool is_aref_use(OpKind kind);

// The warp_group op that `op` is nested in (null outside roles).
const Operation* enclosing_role(const Operation& op);

// The `aref` op that made an aref value (null for a value that is not one).
const Operation* aref_def(const Value* v);

// `values` (ring slot buffers) and the transposes of them that `block` makes, at any depth and
// transitively: the values a read of the slot may go through.
std::vector<const Value*> slot_views(std::vector<const Value*> values, const Block& block);

// The ops in `block` (and nested in it) whose threads read one of `values` themselves, in block
// order: every user of them or their views (slot_views) but an mma (wgmma reads shared memory
// through the async proxy, retired by its wait), a transpose (a view) and an aref_release.
// lower-arefs and lower-mainloops ask it who reads a ring slot with ordinary loads, tighten-arefs
// where a slot's last such read is.
std::vector<const Operation*> thread_readers(std::vector<const Value*> values, const Block& block);

// Checks one async op's operands, results, attributes and where it stands (top level, in a
// role); throws UserError naming the op.
void verify_async_op(const Operation& op);

// Checks a kernel's roles together: they own disjoint thread ranges within the block grid's
// `threads`, and once roles begin every op belongs to one. UserError naming the role or op.
void verify_roles(const Operation& kernel);

}  // namespace tessel::ir
