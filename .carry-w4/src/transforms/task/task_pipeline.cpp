// The task compiler's pipeline (task_pipeline.h).
#include "transforms/task/task_pipeline.h"

#include <algorithm>
#include "frontend/task/dependence_analysis.h"
#include "pipeline/pipeline.h"
#include "transforms/task/allocate_shared.h"
#include "transforms/task/eliminate_copies.h"

#include "transforms/task/lower_to_tile.h"
#include "transforms/task/vectorize.h"

namespace tessel::transforms {

const std::vector<std::string>& task_stages() {
  static const std::vector<std::string> stages = {"dependence-analysis", "eliminate-copies",
                                                  "vectorize",           "eliminate-copies-2",
                                                  "allocate-shared",     "lower-to-tile"};
  return stages;
}

void run_task_stage(task::events::Program& p, const std::string& name) {
  if (name == "eliminate-copies" || name == "eliminate-copies-2") {
    eliminate_copies(p);
  } else if (name == "vectorize") {
    vectorize(p);
  } else if (name == "allocate-shared") {
    // The tile pipeline's own share of the block, asked of the kernel this event IR lowers to
    // (lower-to-tile reads no offsets, so lowering before the allocation is the same lowering).
    // A kernel the tile pipeline refuses before its ring budgets (e.g. a warp-specialized block
    // of three consumer warpgroups) is checked against the block's capacity alone here:
    // compiling the tile IR reports the refusal, at the tile op it concerns.
    TileKernel kernel = lower_to_tile(p);
    PipelineShared held;
    try {
      pipeline::SharedUse use = pipeline::tile_pipeline_shared_use(kernel.module());
      held = {use.held, use.str};
    } catch (const UserError&) {
    }
    allocate_shared(p, held);
  } else {
    user_error(SourceLocation::unknown(), "no event-IR stage '", name,
               "' (eliminate-copies, vectorize, eliminate-copies-2, allocate-shared; "
               "lower-to-tile last)");
  }
}

task::events::Program compile_task_events(const task::Instantiation& inst,
                                          const TaskCompileOptions& options) {
  if (!options.stop_after.empty()) {
    const auto& s = task_stages();
    if (std::find(s.begin(), s.end() - 1, options.stop_after) == s.end() - 1)
      user_error(SourceLocation::unknown(), "no event-IR stage '", options.stop_after,
                 "' (dependence-analysis, eliminate-copies, vectorize, eliminate-copies-2, "
                 "allocate-shared)");
  }
  task::events::Program p = task::analyze_dependences(inst);
  auto stage = [&](const std::string& name) {
    if (options.print_after_all)
      *options.print_after_all << "// -----// event IR after " << name << " //----- //\n"
                               << p.print();
    return name == options.stop_after;
  };
  if (stage("dependence-analysis")) return p;
  for (const std::string& name : task_stages()) {
    if (name == "dependence-analysis") continue;
    if (name == "lower-to-tile") break;
    run_task_stage(p, name);
    if (stage(name)) return p;
  }
  return p;
}

TileKernel compile_task_program(const task::Instantiation& inst,
                                const TaskCompileOptions& options) {
  task::events::Program p = compile_task_events(inst, options);
  TileKernel kernel = lower_to_tile(p);
  if (options.print_after_all)
    *options.print_after_all << "// -----// tile IR after lower-to-tile //----- //\n"
                             << kernel.text();
  return kernel;
}

}  // namespace tessel::transforms
