#include "transforms/schedule/cluster_blocks.h"

#include "ir/async.h"
#include "transforms/async/multicast_loads.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

bool is_tma_load(const Operation& op) {
  return op.kind() == OpKind::copy && op.num_operands() == 2 && op.has_attr("atom") &&
         op.str_attr("atom").rfind("tma.load", 0) == 0;
}

void cluster_kernel(Operation& kernel) {
  Operation* grid = nullptr;
  std::vector<Operation*> producers;
  for (const auto& op : kernel.region(0)->ops()) {
    if (op->kind() == OpKind::block_grid) grid = op.get();
    if (op->kind() == OpKind::warp_group && op->str_attr("role") == "producer") {
      producers.push_back(op.get());
    }
  }
  if (!grid || !grid->has_attr("cluster")) return;
  const Attribute& pin = *grid->attr("cluster");
  const bool automatic = pin.kind == Attribute::Kind::ident && pin.s == "auto";
  int want = -1;  // the pinned dimension
  if (!automatic) {
    int64_t blocks = 1;
    for (int64_t e : pin.list) blocks *= e;
    if (blocks == 1) {
      grid->remove_attr("cluster");
      return;
    }
    // split-k's grid has a third dimension, the parts of a tile, with one block along it.
    const bool parts_alone = pin.list.size() == 3 && pin.list[2] == 1;
    if ((pin.list.size() == 2 || parts_alone) && blocks == 2) want = pin.list[0] == 2 ? 0 : 1;
  }
  // A third dimension (split-k's parts of a tile, or a batch) has one block along it: the blocks
  // of a cluster are adjacent along the first two and take the same part or problem.
  const bool three_d = grid->num_results() == 3;
  const bool persistent =
      !grid->has_attr("persistent") || grid->attr("persistent")->kind != Attribute::Kind::integer ||
      grid->int_attr("persistent") != 0;
  if ((!automatic && want < 0) || producers.empty() || !persistent ||
      (grid->num_results() != 2 && !three_d)) {
    user_error(grid->loc(), "cluster-blocks: `cluster = ", pin.str(),
               "` needs a warp-specialized persistent kernel with a 2-D grid (or 3-D: split-k's "
               "parts or a batch), and a cluster of "
               "[2, 1], [1, 2], [1, 1] or auto");
  }

  // Bytes per producer iteration that blocks adjacent along each dimension share and can
  // multicast (a shared tile that does not split into two row halves, such as a 1-D bias row,
  // is loaded by each block as before and does not count).
  int64_t shared_bytes[2] = {0, 0};
  for (Operation* role : producers) {
    ir::walk(role, [&](Operation* op) {
      if (!is_tma_load(*op)) return;
      const Value* tile = op->operand(0);
      const Type& buffer = op->operand(1)->type();
      if (!splits_into_row_shares(buffer, 2)) return;
      for (int d = 0; d < 2; ++d) {
        if (!ir::depends_on(tile, grid->result(d))) shared_bytes[d] += buffer.static_bytes();
      }
    });
  }
  auto pays = [&](int d) { return shared_bytes[d] > 0; };
  int best = -1;
  if (automatic) {
    for (int d = 0; d < 2; ++d) {
      if (pays(d) && (best < 0 || shared_bytes[d] > shared_bytes[best])) best = d;
    }
    if (best < 0) {
      grid->remove_attr("cluster");
      return;
    }
  } else {
    if (!pays(want)) {
      user_error(grid->loc(), "cluster-blocks: `cluster = ", pin.str(), "` pairs blocks along ",
                 "dimension ", want, ", but no TMA load of the producer is the same for both "
                 "and splits into two halves of whole rows on its swizzle's repeat: the cluster "
                 "would share nothing");
    }
    best = want;
  }
  std::vector<int64_t> shape = best == 0 ? std::vector<int64_t>{2, 1} : std::vector<int64_t>{1, 2};
  if (three_d) shape.push_back(1);
  grid->set_attr("cluster", Attribute::ints(shape));
}

}  // namespace

void cluster_blocks(ir::Module& module) {
  for (const auto& kernel : module.kernels) cluster_kernel(*kernel);
}

}  // namespace tessel::transforms
