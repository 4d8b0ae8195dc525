// Pins (src/ir/pins.h) as the passes name them: a tile program's attributes that fix a choice a
// pass would otherwise make, read the same way by every pass and by the emitter.
#pragma once

#include "ir/pins.h"

namespace tessel::transforms {

using ir::grid_flag;
using ir::kernel_grid;
using ir::pinned_choice;
using ir::pinned_flag;

}  // namespace tessel::transforms
