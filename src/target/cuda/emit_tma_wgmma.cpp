// The sm_90a mainloop: TMA loads completing on mbarriers, S stages ahead of wgmma from shared
// memory, with a configurable number of wgmma groups in flight (no warp specialization).
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

void Emitter::tma_wgmma_mainloop(const Operation& for_op) {
  unsupported(for_op, "with TMA copies and wgmma is not emitted yet");
}

}  // namespace tessel::target::cuda::detail
