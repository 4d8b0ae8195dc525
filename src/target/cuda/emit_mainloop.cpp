// The parts of shared-memory handling that the emitter's parts share: what a mainloop is, the
// block order, and the one dynamic shared allocation (rings of emit_async.cpp and
// emit_cp_async_mma.cpp, scratch, staging buffers).
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

void Emitter::block_grid(const Operation& op) {
  if (op.num_results() > 3) unsupported(op, "has more than 3 dimensions");
  std::vector<std::string> names;
  for (int i = 0; i < op.num_results(); ++i) {
    names.push_back(fresh(op.result(i)->name()));
    scalars_[op.result(i)] = names.back();
  }
  if (op.has_attr("cluster")) {
    const auto& c = op.ints_attr("cluster");
    for (size_t d = 1; d < c.size(); ++d) {
      if (c[d] != 1) unsupported(op, "groups blocks into clusters along a dimension other than x");
    }
    out_.cluster = static_cast<int>(c[0]);
  }
  const int64_t group = op.has_attr("raster_group") ? op.int_attr("raster_group") : 1;
  if (group < 1) unsupported(op, "needs raster_group >= 1, not " + std::to_string(group));
  // Without the attribute, the hardware's order (dimension 0 fastest); `raster_group = 1` is the
  // grouped order with groups of one: dimension 1 fastest (as the persistent loop reads it).
  if (!op.has_attr("raster_group") || op.num_results() != 2) {
    const char* axes[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    for (size_t i = 0; i < names.size(); ++i) line("const int " + names[i] + " = " + axes[i] + ";");
    return;
  }
  // Grouped order (as Triton's GROUP_M): the linear block index walks `group` rows of dimension 0
  // down one column of dimension 1 before moving right, so each wave of resident blocks touches
  // `group` row tiles and a few column tiles instead of one column tile and every row tile.
  std::string g = std::to_string(group);
  line("int " + names[0] + ", " + names[1] + ";");
  line("{  // raster: groups of " + g + " along dimension 0");
  line("  const int linear = blockIdx.x + blockIdx.y * gridDim.x;");
  if (group == 1) {
    // Dimension 1 fastest: one unsigned division by gridDim.y. The general form's `% rows` and
    // `/ rows` are divisions by a value the compiler cannot see is 1: ~40 instructions a thread,
    // 2.5 an element of a row program's [1,1024] tile with 16 values a thread (bias + GELU,
    // issue-bound on the H200: bench/results/2026-11-28-bars-deeper-rings-h200.md).
    line("  " + names[0] + " = (int)((unsigned)linear / gridDim.y);");
    line("  " + names[1] + " = linear - " + names[0] + " * (int)gridDim.y;");
    line("}");
    return;
  }
  line("  const int per_group = " + g + " * gridDim.y;");
  line("  const int first = (linear / per_group) * " + g + ";");
  line("  const int rows = min((int)gridDim.x - first, " + g + ");");
  line("  " + names[0] + " = first + (linear % per_group) % rows;");
  line("  " + names[1] + " = (linear % per_group) / rows;");
  line("}");
}

int64_t Emitter::alloc_shared(int64_t bytes, int64_t align) {
  TESSEL_ASSERT(align > 0 && (align & (align - 1)) == 0, "alignment must be a power of two");
  smem_align_ = std::max(smem_align_, align);
  int64_t offset = (smem_bytes_ + align - 1) / align * align;
  smem_bytes_ = offset + bytes;
  return offset;
}

}  // namespace tessel::target::cuda::detail
