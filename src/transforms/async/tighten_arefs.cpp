// TightenArefs: consumer aref waits sunk to their first reads, releases of slots only copied
// into registers hoisted to their last reads (the rules are in the header).
#include "transforms/async/tighten_arefs.h"

#include <cstddef>
#include <set>
#include <vector>

#include "ir/async.h"
#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Value;

// Whether `op` or an op nested in it reads one of `values`.
bool reads_any(Operation* op, const std::set<const Value*>& values) {
  bool found = false;
  ir::walk(op, [&](Operation* inner) {
    for (const Value* v : inner->operands())
      if (values.count(v)) found = true;
  });
  return found;
}

// The role's own synchronization (a named barrier of its threads, the block's or cluster's, a
// ping-pong turn): neither move crosses one. A release after a role_sync is one arrival per
// warpgroup that the sync orders after every thread's read (lower-arefs: synced_after); hoisted
// above it, every thread would arrive.
bool is_sync(const Operation& op) {
  switch (op.kind()) {
    case OpKind::role_sync:
    case OpKind::block_sync:
    case OpKind::cluster_sync:
    case OpKind::turn_begin:
    case OpKind::turn_wait:
    case OpKind::turn_pass:
      return true;
    default:
      return false;
  }
}

// Moves `op` of `block` to just before the op now at `before` (an index into the block as it is
// before the move).
void move_to(Block& block, Operation* op, size_t before) {
  const size_t from = ir::position_in_block(*op);
  std::unique_ptr<Operation> moved = block.remove(op);
  block.insert(before > from ? before - 1 : before, std::move(moved));
}

// Each aref_wait of `block` just before the first op of the block that reads its buffers.
void sink_waits(Block& block) {
  std::vector<Operation*> waits;
  for (const auto& op : block.ops())
    if (op->kind() == OpKind::aref_wait) waits.push_back(op.get());
  for (Operation* wait : waits) {
    std::set<const Value*> buffers;
    for (const auto& r : wait->results()) buffers.insert(r.get());
    const size_t at = ir::position_in_block(*wait);
    for (size_t i = at + 1; i < block.ops().size(); ++i) {
      Operation* op = block.ops()[i].get();
      // Nor past another use of the same aref: each role takes its sequence numbers in order.
      const bool same_aref = (op->kind() == OpKind::aref_wait ||
                              op->kind() == OpKind::aref_release) &&
                             op->operand(0) == wait->operand(0);
      if (!reads_any(op, buffers) && !is_sync(*op) && !same_aref) continue;
      if (i > at + 1) move_to(block, wait, i);
      break;
    }
  }
}

// Whether a slot (its `buffers`, and `views` of them) is read in `block` only by copies into
// registers: no mma reads a view of it, and every thread's read of it (ir::thread_readers,
// lower-arefs' notion) is a copy into registers, done when the copy is.
bool only_copied_to_registers(const std::vector<const Value*>& buffers,
                              const std::set<const Value*>& views, const Block& block) {
  bool mma = false;
  for (const auto& top : block.ops()) {
    ir::walk(top.get(), [&](Operation* op) {
      if (op->kind() == OpKind::mma && reads_any(op, views)) mma = true;
    });
  }
  if (mma) return false;
  for (const Operation* reader : ir::thread_readers(buffers, block)) {
    const bool to_registers = reader->kind() == OpKind::copy && reader->num_results() == 1 &&
                              reader->result()->type().is_tensor() &&
                              reader->result()->type().space() == MemorySpace::reg;
    if (!to_registers) return false;
  }
  return true;
}

// Each aref_release of `block` whose wait stands in the block and whose buffers are only copied
// into registers just after the last op of the block that reads them.
void hoist_releases(Block& block) {
  std::vector<Operation*> releases;
  for (const auto& op : block.ops())
    if (op->kind() == OpKind::aref_release) releases.push_back(op.get());
  for (Operation* release : releases) {
    const size_t at = ir::position_in_block(*release);
    const Operation* wait = nullptr;
    for (size_t i = 0; i < at; ++i) {
      const Operation* op = block.ops()[i].get();
      if (op->kind() == OpKind::aref_wait && op->operand(0) == release->operand(0) &&
          op->operand(1) == release->operand(1))
        wait = op;
    }
    if (!wait) continue;
    std::vector<const Value*> buffers;
    for (const auto& r : wait->results()) buffers.push_back(r.get());
    const std::vector<const Value*> view_list = ir::slot_views(buffers, block);
    const std::set<const Value*> views(view_list.begin(), view_list.end());
    if (!only_copied_to_registers(buffers, views, block)) continue;
    size_t last = ir::position_in_block(*wait);
    for (size_t i = last + 1; i < at; ++i)
      if (reads_any(block.ops()[i].get(), views) || is_sync(*block.ops()[i])) last = i;
    if (last + 1 < at) move_to(block, release, last + 1);
  }
}

}  // namespace

void tighten_arefs(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    if (grid_flag(*kernel, "tighten_arefs") == false) continue;
    std::vector<Block*> blocks;
    ir::walk(kernel.get(), [&](Operation* op) {
      if (op->kind() != OpKind::warp_group || op->str_attr("role") != "consumer") return;
      ir::walk(op, [&](Operation* inner) {
        for (const auto& region : inner->regions()) blocks.push_back(region.get());
      });
    });
    for (Block* block : blocks) {
      sink_waits(*block);
      hoist_releases(*block);
    }
  }
}

}  // namespace tessel::transforms
