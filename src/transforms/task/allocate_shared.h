// AllocateShared (Cypress §4.2.4): binds the shared-memory tensors of each block to offsets within
// the block's budget (the mapping's `shared_limit`, else the machine's 227 KiB). Two tensors
// interfere when their live ranges (first to last op that names them, a loop's whole body for a
// tensor used in it) overlap; a tensor allocated in a loop body that the mapping pipelines with
// depth P needs P buffers (the ring the pipeline rotates through), and the buffers of a pipelined
// loop interfere with each other (several iterations are in flight at once). Offsets are assigned
// largest first at the lowest offset that no interfering tensor occupies, so tensors that do not
// interfere share memory. A mapping that does not fit is a UserError at the mapping item (the
// pipeline depth or the instance) that names every tensor, its bytes and the budget.
// The tile IR's own passes place the buffers again when they lower the mainloop; the offsets here
// are the task level's check and plan (printed with the IR).
#pragma once

#include "frontend/task/event_ir.h"

namespace tessel::transforms {

void allocate_shared(task::events::Program& program);

}  // namespace tessel::transforms
