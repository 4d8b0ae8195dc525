#include "transforms/async/lower_arefs.h"

#include "support/diagnostics.h"

namespace tessel::transforms {

// Scaffolding for the pass being written this session (issue 10); replaced by the real pass.
void lower_arefs(ir::Module& module) {
  for (const auto& k : module.kernels) {
    user_error(k->loc(), "lower_arefs: not implemented yet");
  }
}

}  // namespace tessel::transforms
