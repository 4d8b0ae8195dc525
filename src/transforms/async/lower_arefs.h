// LowerArefs: arefs to mbarriers with phase parity, arrive counts and transaction bytes; setmaxnreg.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// LowerArefs: arefs to mbarriers with phase parity, arrive counts and transaction bytes; setmaxnreg.
void lower_arefs(ir::Module& module);

}  // namespace tessel::transforms
