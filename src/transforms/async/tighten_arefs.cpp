// TightenArefs: consumer aref waits sunk to their first reads, releases of slots only copied
// into registers hoisted to their last reads (the rules are in the header).
#include "transforms/async/tighten_arefs.h"

#include <cstddef>
#include <optional>
#include <set>
#include <vector>

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

bool is_shared_view(const Operation& op) {
  return op.num_results() == 1 && op.result()->type().is_tensor() &&
         op.result()->type().space() == MemorySpace::shared;
}

std::optional<size_t> position(const Block& block, const Operation* op) {
  for (size_t i = 0; i < block.ops().size(); ++i)
    if (block.ops()[i].get() == op) return i;
  return std::nullopt;
}

// Moves `op` of `block` to just before the op now at `before` (an index into the block as it is
// before the move).
void move_to(Block& block, Operation* op, size_t before) {
  const size_t from = *position(block, op);
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
    const size_t at = *position(block, wait);
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

// The buffers of `wait` and the shared views of them that `block` makes (at any depth).
std::set<const Value*> buffers_and_views(const Operation& wait, Block& block) {
  std::set<const Value*> out;
  for (const auto& r : wait.results()) out.insert(r.get());
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& top : block.ops()) {
      ir::walk(top.get(), [&](Operation* op) {
        if (!is_shared_view(*op) || out.count(op->result())) return;
        for (const Value* v : op->operands())
          if (out.count(v)) {
            out.insert(op->result());
            grew = true;
            return;
          }
      });
    }
  }
  return out;
}

// Whether every op of `block` (at any depth) that reads `values` is a shared view of them or a
// copy into registers: no mma, nothing that may read the slot after the op itself is done.
bool only_copied_to_registers(Block& block, const std::set<const Value*>& values) {
  bool only = true;
  for (const auto& top : block.ops()) {
    ir::walk(top.get(), [&](Operation* op) {
      bool reads = false;
      for (const Value* v : op->operands()) reads = reads || values.count(v) > 0;
      if (!reads || is_shared_view(*op)) return;
      const bool to_registers = op->kind() == OpKind::copy && op->num_results() == 1 &&
                                op->result()->type().is_tensor() &&
                                op->result()->type().space() == MemorySpace::reg;
      if (!to_registers) only = false;
    });
  }
  return only;
}

// Each aref_release of `block` whose wait stands in the block and whose buffers are only copied
// into registers just after the last op of the block that reads them.
void hoist_releases(Block& block) {
  std::vector<Operation*> releases;
  for (const auto& op : block.ops())
    if (op->kind() == OpKind::aref_release) releases.push_back(op.get());
  for (Operation* release : releases) {
    const size_t at = *position(block, release);
    const Operation* wait = nullptr;
    for (size_t i = 0; i < at; ++i) {
      const Operation* op = block.ops()[i].get();
      if (op->kind() == OpKind::aref_wait && op->operand(0) == release->operand(0) &&
          op->operand(1) == release->operand(1))
        wait = op;
    }
    if (!wait) continue;
    const std::set<const Value*> buffers = buffers_and_views(*wait, block);
    if (!only_copied_to_registers(block, buffers)) continue;
    size_t last = *position(block, wait);
    for (size_t i = last + 1; i < at; ++i)
      if (reads_any(block.ops()[i].get(), buffers) || is_sync(*block.ops()[i])) last = i;
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
