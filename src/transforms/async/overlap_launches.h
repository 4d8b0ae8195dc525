// OverlapLaunches: a launch starts while the launch before it on the stream is still running
// (Hopper's programmatic dependent launch), and waits for it only where it must.
//
// Why. Back-to-back launches of a short kernel (a W4A16 GEMV at M = 16: 18 µs, of which ~4.5 µs
// is a fixed cost per launch; flash-decoding over a small KV cache; a 64-token GEMM) pay, per
// launch, the gap between one grid's end and the next grid's first blocks, the blocks' prologue
// (barrier init, register reconfiguration) and the latency of the first loads, with the SMs idle
// (bench/results/2026-11-27-split-roles-h100.md: 3.6-4.6 µs per launch against cuBLAS's 1.6-1.9).
// With a programmatic launch the next grid's blocks take SMs as the previous grid's blocks leave
// them, run their prologue and start loading what no earlier launch writes (a model's weights),
// and wait for the previous grid only before the first access that may depend on it.
//
// What the pass does (last before check-protocol, on level-2 IR), unless the block_grid pins
// `overlap_launches = off`, and only for sm_90 targets:
//   - `launch_dependents` as the kernel's first op where a block owns its SM (the kernel has
//     roles, whose setmaxnreg split assumes one block per SM, and no `blocks_per_sm > 1`): the
//     next launch may begin as soon as every block of this one has started, and its blocks queue
//     for SMs, each taking one as this launch's block there leaves. That is safe at any point
//     because the next launch's grid_wait waits for this launch to finish, not for the trigger.
//     Where blocks share SMs (row kernels, `blocks_per_sm = 4`), an early trigger lets the next
//     launch's blocks sit, waiting, beside this launch's working blocks: measured on the H100 it
//     slows W4A16's split-k kernel (4 blocks per SM) from 59 to 70 µs at 16x8192x32768, while a
//     one-block-per-SM kernel gains (57.5 -> 54.8 µs; 2026-11-27-overlap-launches-h100.md). There
//     the blocks trigger as they exit (`overlap_launches = late` asks for that everywhere,
//     `early` for the trigger first everywhere);
//   - `grid_wait` in every thread before its first access to global memory that is not a read
//     of a `ready(...)` parameter: at the kernel's top level before the first op (a loop, a copy)
//     that contains such an access, or, when the roles begin first, in each role before the
//     first op of its body that contains one. An access is any op other than a view (tile,
//     transpose, global_view, tile_extent, workspace, workspace_part) with a global operand:
//     loads, stores, TMA copies, counters, find_group's reads of a group list. Workspaces are
//     never ready (the previous launch of the same kernel uses them);
//   - with `overlap_launches = prefetch` (opt-in), before a role's or the kernel's grid_wait
//     that stands before a loop, `prefetch` ops for the first iterations' TMA loads of ready
//     tensors in that loop: a loop over the first ceil(slots / producers) iterations (the ring's
//     depth divided among the producer roles that take turns filling it) that recomputes each
//     load's tile coordinates from the induction variable (index arithmetic and tiles only; a
//     load whose tile needs anything else, or a loop-carried value, is not prefetched) and asks
//     for the tile in L2, so that the loads after the wait find their first tiles there (and
//     the trigger first, as `early`).
//   - with `overlap_launches = preload` (opt-in), before a role's or the kernel's grid_wait that
//     stands before a loop, the loop's TMA loads of ready tensors for its first iterations go
//     into their ring slots themselves, not only into L2: at the loop body's top level, each
//     arrival on a slot (`mbarrier_expect_tx` of B bytes and the copies completing on the same
//     barrier slot) whose ready copies' tiles and slot index the loop computes from its
//     induction variable (index arithmetic and tiles only) is split. A loop over the first
//     floor(slots / roles filling the ring) iterations (every such slot is in its first round,
//     still empty, so it waits for nothing) issues the ready copies after
//     `mbarrier_expect_tx {bytes = R, no_arrival}` (their bytes without an arrival); in the loop,
//     an iteration the preload covered announces B - R bytes with its arrival and issues only the
//     other copies, the others announce B and issue all as before (an `if` on the iteration).
//     The trigger goes first, as with `early`. Measured by hand before it was a pass (lowered IR
//     edited by bench/kernel-variants/w4a16_preload_ready.py): W4A16 at M = 1 0.3-0.4 µs a
//     launch faster, at M = 16 0.5 µs slower (bench/results/2026-11-28-w4a16-preload-ready-h100.md);
//     as the pass on the H200, 0.2-0.6 µs a launch faster where it gains
//     (bench/results/2026-11-28-h200-first-h200.md).
// The default, `overlap_launches = wait`, places the trigger and the waits without prefetches:
// on the H100 the prefetches cost W4A16 at M = 16 0.3 µs per launch instead of saving any (17.5
// against 17.0 µs at N = K = 8192, bench/results/2026-11-27-overlap-launches-h100.md): with one
// block per SM, a block of the next launch gets its SM only when this launch's block there has
// left, too late for a prefetch to run ahead of anything.
//
// The runtime launches a kernel that holds a grid_wait with the programmatic stream
// serialization attribute (EmittedKernel::overlaps_launches); launched without it, grid_wait
// returns at once. After a kernel that does not trigger early, the launch begins as that
// kernel's blocks exit (each triggers then) and still waits for its memory.
//
// What the user promises with ready(%W): no launch that may still be running when this one
// starts writes %W. The kernel itself must only read it (the verifier checks).
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Places launch_dependents, grid_wait and the ready tensors' L2 prefetches or preloads (see above).
void overlap_launches(ir::Module& module);

}  // namespace tessel::transforms
