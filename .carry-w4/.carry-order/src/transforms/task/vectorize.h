// Vectorize (Cypress §4.2.2): flattens the parallel loops that are implicit in the GPU — a `pfor`
// over warpgroups, warps or threads of a block — into single ops spread over those processors.
// The tile IR that the task compiler ends in is block-level (an op acts on a whole tile, and layout
// synthesis distributes it over the block's threads), so an op of the loop body that works on
// piece `w` of a partition whose pieces cover the parent exactly becomes the same op on the
// parent, with a *lane* (n x warpgroup along dimension d) that records how the mapping split it.
// Tensors the body only reads and that do not depend on the loop index (B of a GEMM, shared by
// every warpgroup) stay as they are. Event arrays are promoted: the op's event gains a dimension
// of n events on that level, and waits on the loop's events index them by the processor.
// Loops over blocks (the grid) stay: they become the block grid. A loop body that allocates, or
// an operand that is neither kind, cannot be vectorized: a UserError naming the op.
#pragma once

#include "frontend/task/event_ir.h"

namespace tessel::transforms {

void vectorize(task::events::Program& program);

}  // namespace tessel::transforms
