// The task compiler's pipeline (task_pipeline.h).
#include "transforms/task/task_pipeline.h"

#include <algorithm>
#include "frontend/task/dependence_analysis.h"
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
  eliminate_copies(p);
  if (stage("eliminate-copies")) return p;
  vectorize(p);
  if (stage("vectorize")) return p;
  eliminate_copies(p);
  if (stage("eliminate-copies-2")) return p;
  allocate_shared(p);
  stage("allocate-shared");
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
