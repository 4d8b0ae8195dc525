// CheckProtocol: the barrier protocol of a kernel after lower-arefs, checked at compile time so
// that a broken protocol is an error naming the barrier and the op, never a hang on the GPU.
//
// Method: a bounded model check. The kernel's synchronization skeleton — its roles, loops and
// branches with their index arithmetic, mbarrier_init / wait / arrive / expect_tx, TMA loads
// (copy_async) into ring slots, the slot buffers' readers, wgmma groups (mma_commit / mma_wait) —
// is executed on concrete sizes: every size symbol takes a few values that respect the kernel's
// facts (giving its loops 1, 3, 4, 5 and 9-odd trips of a 64-wide tile, below, at and past the
// usual ring depths), `sm_count` 1 and 3, blocks 0 and the last of the grid. Each role runs as a
// coroutine; a wait that cannot pass blocks it. Four schedules explore the interleavings that
// matter: producer first and consumer first (a role runs as far as it can before the other),
// each with TMA loads landing at once or only when nothing else can move (as late as possible).
// Barriers follow ir::BarrierModel (HOPPER.md §5: a fresh barrier's parity-1 phase counts as
// complete). Reported, each naming the barrier or ring slot and the op with its location:
//   - a deadlock: every unfinished role waits on a phase that nothing left can complete (a
//     missing arrive, a wrong parity, a role that runs more iterations than its partner);
//   - too many arrivals (or bytes) in a phase: an arrive count that does not match `arrivals`;
//   - a ring slot read before the TMA load for it landed (a wait that passed too early: wrong
//     parity), or after a newer load into it was issued;
//   - a ring slot written by a TMA load while an earlier use of it is still being read (a release
//     before the wgmma group reading the slot was retired, or a producer not waiting for it);
//   - a slot written and never read when the block ends.
// What it assumes: branches and loop bounds depend only on sizes, constants, block indices and
// loop variables (the forms the passes make); anything else is reported as something the check
// cannot follow. Kernels without roles or mbarriers pass untouched.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Checks the barrier protocol of every kernel of `module` (see above); UserError on a violation.
void check_protocol(ir::Module& module);

}  // namespace tessel::transforms
