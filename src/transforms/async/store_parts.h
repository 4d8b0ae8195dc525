// What overlap-epilogue and defer-stores move out of a persistent consumer's tile: the staged
// stores stage-stores made of the output tile (slices, stmatrix copies, TMA stores, their waits,
// fences and role syncs) and the index arithmetic around them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel::transforms {

// Ops that may move from the end of a tile into the next tile: the staged stores and the index
// arithmetic around them. Anything that talks to an aref, a barrier or the wgmma groups stays.
inline bool movable_store_op(const ir::Operation& op) {
  using ir::OpKind;
  switch (op.kind()) {
    case OpKind::slice:
    case OpKind::copy:
    case OpKind::copy_async:
    case OpKind::copy_async_wait:
    case OpKind::copy_async_commit:
    case OpKind::role_sync:
    case OpKind::fence_proxy_async:
    case OpKind::tile:
    case OpKind::constant:
      return op.kind() != OpKind::copy_async || op.num_operands() == 2;  // stores, not loads
    case OpKind::if_:
      return op.num_results() == 0;
    default:
      return ir::is_index_arithmetic(op.kind());
  }
}

// Index arithmetic among the stores that may stay in the tile body when the tile loop's yield
// needs it.
inline bool pure_index_op(const ir::Operation& op) {
  using ir::OpKind;
  return op.regions().empty() && op.num_results() == 1 && op.result()->type().is_scalar() &&
         movable_store_op(op) && op.kind() != OpKind::copy_async_wait &&
         op.kind() != OpKind::copy_async_commit && op.kind() != OpKind::role_sync &&
         op.kind() != OpKind::fence_proxy_async;
}

// `if %cond { }` at the builder's insertion point; returns its then block.
inline ir::Block* make_if(ir::OpBuilder& b, ir::Value* cond, SourceLocation loc) {
  auto branch = std::make_unique<ir::Operation>(ir::OpKind::if_, loc);
  branch->add_operand(cond);
  branch->add_region();
  branch->add_region();
  return b.insert(std::move(branch))->region(0);
}

// The output tile of a persistent consumer's tile body: the first 16-bit register cast whose
// slices are stored (stage-stores' parts), with its position and that of its first slice.
struct OutputTile {
  ir::Operation* cast = nullptr;
  size_t cast_at = 0;
  size_t first_slice = 0;
};
std::optional<OutputTile> find_output_tile(const ir::Block& body);

// The values of `loop`'s body that the `moved` ops use and must be carried into the next tile:
// the output tiles `outs` (first, in their order) and index scalars. Appends them to `carried`;
// returns "" or why the ops use something else of the body.
std::string collect_carried(const ir::Operation& loop, const std::vector<ir::Operation*>& moved,
                            const std::vector<const ir::Value*>& outs,
                            std::vector<ir::Value*>& carried);

// Makes the tile loop carry `carried` to the next tile: each value becomes an iteration argument
// (`prev_*`, zeros or 0 for the first tile) and a result (`last_*`), and `has_prev_tile` (the
// tile is not the block's first) is computed at the top of the body.
struct CarriedAcross {
  std::vector<ir::Value*> previous, last;
  ir::Value* has_prev = nullptr;
};
CarriedAcross carry_across_tiles(ir::Operation& loop, const std::vector<ir::Value*>& carried);

}  // namespace tessel::transforms
