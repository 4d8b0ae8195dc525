// The sm_80 mainloop: cp.async (or plain) global -> shared copies, S stages ahead of ldmatrix and
// mma.sync.
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

void Emitter::cp_async_mma_mainloop(const Operation& for_op) {
  unsupported(for_op, "with copies into shared memory is not emitted yet on the sm_80 path");
}

}  // namespace tessel::target::cuda::detail
