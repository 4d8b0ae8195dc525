// The compilation pipeline: the passes that take a tile program to lowered IR, in order, in one
// readable place (Halide's Lower.cpp), with --print-after-all / TESSEL_DUMP_IR=1 and pass timing.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel::pipeline {

struct PipelineOptions {
  // Print the module after every pass to `dump` (also switched on by TESSEL_DUMP_IR=1, which
  // prints to stderr when `dump` is null).
  bool print_after_all = false;
  std::ostream* dump = nullptr;
  // One line per pass, "pass NAME: 0.123 ms (verify 0.045 ms)", when not null.
  std::ostream* timing = nullptr;
  // Passes to run instead of lowering_passes() (e.g. {"verify"} for IR that is lowered already,
  // hand-edited lowered IR, or a pipeline under study); empty: the default list.
  std::vector<std::string> passes;
};

// The passes `lower` runs, in order.
std::vector<std::string> lowering_passes();

// Runs lowering_passes() (or options.passes) on `module`, then checks that the result is lowered: every register tensor
// has a thread-value layout (the emitter's contract). UserError naming the first value without one.
void lower(ir::Module& module, const PipelineOptions& options = {});

// The lowered-IR check alone.
void check_lowered(const ir::Module& module);

// What the tile pipeline takes of a block's shared memory for itself, beside the shared tiles the
// program copies (the rings' slots and once-per-tile buffers): the ring budget's reserve
// (barriers, reduction scratch) and the shared tensors its passes add (the staged epilogue's
// buffers, rearrange scratch). Asked by a frontend that plans shared memory before the tile
// pipeline runs (the task compiler's allocate-shared), so that its budget is the one
// pipeline-arefs / pipeline-loops will hold the program's tiles to. Computed by running the
// lowering passes up to stage-stores on a copy of `module` (one kernel) and asking the stage
// budget (transforms/async/stage_budget.h) what it would leave: no second copy of its rules.
struct SharedUse {
  int64_t capacity = 0;  // the block's shared memory on the kernel's target
  int64_t held = 0;      // what the pipeline holds beside the program's tiles
  std::string str;       // how, for messages ("... minus 2048 reserved for barriers ...")
};
SharedUse tile_pipeline_shared_use(const ir::Module& module);

}  // namespace tessel::pipeline
