// WarpSpecialize: splits a kernel's mainloop into a TMA producer role and consumer roles connected by an aref.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// WarpSpecialize: splits a kernel's mainloop into a TMA producer role and consumer roles connected by an aref.
void warp_specialize(ir::Module& module);

}  // namespace tessel::transforms
