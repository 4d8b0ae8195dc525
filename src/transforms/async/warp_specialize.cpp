#include "transforms/async/warp_specialize.h"

#include "support/diagnostics.h"

namespace tessel::transforms {

// Scaffolding for the pass being written this session (issue 10); replaced by the real pass.
void warp_specialize(ir::Module& module) {
  for (const auto& k : module.kernels) {
    user_error(k->loc(), "warp_specialize: not implemented yet");
  }
}

}  // namespace tessel::transforms
