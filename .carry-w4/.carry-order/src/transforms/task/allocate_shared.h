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
//
// The budget is honest about the tile pipeline: what it holds for itself beside the program's
// tensors (the ring budget's reserve for barriers and reduction scratch, the staged epilogue's
// buffers) comes off the block's capacity first. The task pipeline asks the tile pipeline for that
// figure (pipeline::tile_pipeline_shared_use on the kernel lower-to-tile makes of this event IR),
// so a mapping this stage accepts is one whose pinned pipeline depth pipeline-arefs /
// pipeline-loops can give (the mapping is the place to be told; the ring passes name tile IR).
#pragma once

#include <string>

#include "frontend/task/event_ir.h"

namespace tessel::transforms {

// What the tile pipeline holds in a block's shared memory beside the program's tensors.
struct PipelineShared {
  int64_t held = 0;
  std::string why;  // for the message: how the tile pipeline's budget is made up
};

void allocate_shared(task::events::Program& program, const PipelineShared& pipeline = {});

}  // namespace tessel::transforms
