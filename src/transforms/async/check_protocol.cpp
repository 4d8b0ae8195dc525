#include "transforms/async/check_protocol.h"

#include "support/diagnostics.h"

namespace tessel::transforms {

// Scaffolding for the pass being written this session (issue 10); replaced by the real pass.
void check_protocol(ir::Module& module) {
  for (const auto& k : module.kernels) {
    user_error(k->loc(), "check_protocol: not implemented yet");
  }
}

}  // namespace tessel::transforms
