// CheckProtocol: the static check of the barrier protocol of a kernel after lower-arefs.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// CheckProtocol: the static check of the barrier protocol of a kernel after lower-arefs.
void check_protocol(ir::Module& module);

}  // namespace tessel::transforms
