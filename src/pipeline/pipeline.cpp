#include "pipeline/pipeline.h"

#include <cstdlib>
#include <iostream>

#include "ir/pass.h"
#include "transforms/report.h"

namespace tessel::pipeline {

std::vector<std::string> lowering_passes() {
  std::vector<std::string> passes = {
      "verify",        // the input is well formed
      "canonicalize",  // fold index arithmetic, remove dead ops
  };
  // Layout synthesis (src/transforms): every register tensor gets a thread-value layout (pinned
  // ones are kept and checked), every mma / reduce / global copy an atom; then shared layouts.
  transforms::register_passes();
  passes.push_back("synthesize-layouts");
  passes.push_back("synthesize-shared-layouts");
  // Pipelining without warp specialization (src/transforms/async): every loop that copies global
  // tiles into shared memory gets `stages` (and `mma_in_flight` for wgmma) within the budget.
  passes.push_back("pipeline-loops");
  // The order of the blocks (L2 reuse between the blocks resident at once).
  passes.push_back("raster-blocks");
  return passes;
}

void check_lowered(const ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    ir::walk(kernel.get(), [&](ir::Operation* op) {
      for (const auto& r : op->results()) {
        const ir::Type& t = r->type();
        if (t.is_tensor() && t.space() == ir::MemorySpace::reg && !t.has_layout()) {
          user_error(op->loc(), "compile: %", r->name(), " (", t.str(), ", made by ", op->name(),
                     ") has no thread-value layout; layout synthesis did not assign one, so pin it "
                     "in the type, e.g. register<f32, (T,V):(...)>");
        }
      }
    });
  }
}

void lower(ir::Module& module, const PipelineOptions& options) {
  const char* env = std::getenv("TESSEL_DUMP_IR");
  bool dump = options.print_after_all || (env && std::string(env) == "1");
  std::ostream* out = options.dump ? options.dump : &std::cerr;
  ir::run_passes_timed(module, options.passes.empty() ? lowering_passes() : options.passes, dump,
                       out, options.timing);
  check_lowered(module);
}

}  // namespace tessel::pipeline
