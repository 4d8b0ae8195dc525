#include "transforms/schedule/raster_blocks.h"

#include "support/diagnostics.h"

namespace tessel::transforms {
namespace {

using ir::Operation;
using ir::OpKind;

void raster_kernel(Operation* kernel) {
  Operation* grid = nullptr;
  bool mainloop = false;
  ir::walk(kernel, [&](Operation* op) {
    if (op->kind() == OpKind::block_grid) grid = op;
    mainloop = mainloop || ir::is_mainloop(*op);
  });
  if (!grid) return;
  if (grid->has_attr("raster_group")) {
    const ir::Attribute* a = grid->attr("raster_group");
    if (a->kind != ir::Attribute::Kind::integer || a->i < 1) {
      user_error(grid->loc(), "raster-blocks: raster_group must be an integer >= 1 (blocks taken ",
                 "in groups of that many along dimension 0)");
    }
    return;
  }
  // A third dimension (a batch) keeps each problem's tiles in this order.
  if (!mainloop || grid->num_results() < 2) return;
  grid->set_attr("raster_group", ir::Attribute::integer(kRasterGroup));
}

}  // namespace

void raster_blocks(ir::Module& module) {
  for (const auto& kernel : module.kernels) raster_kernel(kernel.get());
}

}  // namespace tessel::transforms
