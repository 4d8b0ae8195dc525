// The parts of shared-memory handling that both mainloop paths (emit_tma_wgmma.cpp for sm_90a,
// emit_cp_async_mma.cpp for sm_80) use.
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

bool Emitter::is_mainloop(const Operation& for_op) const {
  for (const auto& inner : for_op.region(0)->ops()) {
    if (inner->kind() == OpKind::copy && inner->num_results() == 1 &&
        inner->result()->type().space() == MemorySpace::shared) {
      return true;
    }
  }
  return false;
}

int64_t Emitter::alloc_shared(int64_t bytes, int64_t align) {
  TESSEL_ASSERT(align > 0 && (align & (align - 1)) == 0, "alignment must be a power of two");
  smem_align_ = std::max(smem_align_, align);
  int64_t offset = (smem_bytes_ + align - 1) / align * align;
  smem_bytes_ = offset + bytes;
  return offset;
}

}  // namespace tessel::target::cuda::detail
