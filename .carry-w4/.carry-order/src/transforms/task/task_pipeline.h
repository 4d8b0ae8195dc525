// The task compiler's pipeline (Cypress §4.2, Figure 6), in one readable place: a task program
// instantiated under a mapping goes through
//   dependence-analysis   the task tree -> event IR, copy-in / copy-out (frontend/task)
//   eliminate-copies      spill hoisting, aliasing, forwarding, dead copies
//   vectorize             pfors over warpgroups / warps / threads -> ops with lanes
//   eliminate-copies      again, on the flattened ops
//   allocate-shared       shared tensors to offsets within the block's budget
//   lower-to-tile         -> tile IR, where the tile pipeline (layout synthesis, warp
//                            specialization, pipelining, ...) takes over
// Warp specialization and the pipeline depth are carried into the tile IR as pins
// (`warp_specialize` on the block_grid, `stages` on the mainloop) and done by the tile passes that
// already implement them (warp-specialize: the DMA / compute split of Cypress §4.2.5 on arefs).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "frontend/task/event_ir.h"
#include "frontend/task/instantiate.h"
#include "tessel/tile.h"

namespace tessel::transforms {

struct TaskCompileOptions {
  std::ostream* print_after_all = nullptr;  // the event IR after each stage
  std::string stop_after;                   // an event-IR stage name: stop there
};

// The stage names, in order (the last, lower-to-tile, makes tile IR).
const std::vector<std::string>& task_stages();

// Runs the event-IR stage `name` (eliminate-copies, eliminate-copies-2 — the same pass —,
// vectorize, allocate-shared) on `p`: what `tessel opt` does to event IR read from text.
// UserError for another name (dependence-analysis makes the event IR; lower-to-tile is
// lower_to_tile, as it ends the event IR).
void run_task_stage(task::events::Program& p, const std::string& name);

// The event IR after the event stages (or after options.stop_after).
task::events::Program compile_task_events(const task::Instantiation& inst,
                                          const TaskCompileOptions& options = {});
// The whole pipeline: the tile program.
TileKernel compile_task_program(const task::Instantiation& inst,
                                const TaskCompileOptions& options = {});

}  // namespace tessel::transforms
