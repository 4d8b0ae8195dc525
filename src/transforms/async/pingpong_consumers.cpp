// PingpongConsumers: turns around a consumer's wgmma issues (the rules are in the header).
#include "transforms/async/pingpong_consumers.h"

#include <optional>
#include <string>
#include <vector>

#include "ir/async.h"
#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"
#include "transforms/report.h"
#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;

// The op after `op` in its block (an mma in a loop body is followed at least by the yield).
Operation* next_op(Operation* op) {
  const auto& ops = op->parent_block()->ops();
  for (size_t i = 0; i + 1 < ops.size(); ++i)
    if (ops[i].get() == op) return ops[i + 1].get();
  TESSEL_ASSERT(false, "an mma at the end of its block");
  return nullptr;
}


// The loops of `role` that qualify: wgmma mmas directly in the body, and register work beside.
std::vector<Operation*> qualifying_loops(Operation* role) {
  std::vector<Operation*> out;
  ir::walk(role, [&](Operation* loop) {
    if (works_between_wgmmas(*loop)) out.push_back(loop);
  });
  return out;
}

// A synchronous mma as its async form waited for at once: mma {async}; mma_commit; mma_wait 0.
void make_explicit(Operation* mma) {
  mma->set_attr("async", Attribute::unit());
  ir::OpBuilder b(mma->parent_block());
  b.set_insertion_point_before(next_op(mma));
  b.create(OpKind::mma_commit, {}, {}, mma->loc());
  Operation* wait = b.create(OpKind::mma_wait, {}, {}, mma->loc());
  wait->set_attr("pending", Attribute::integer(0));
}

// Turns in `loop`: a warpgroup holds the turn from an issue that follows a wait (or starts the
// body) up to its next mma_wait, which it passes the turn before. A body that ends holding (its
// last group stays in flight across the back edge) is entered holding: the turn is taken before
// the loop and passed after it. Returns the number of turns per iteration.
int place_turns(Operation* loop) {
  ir::Block* body = loop->region(0);
  std::vector<Operation*> ops;
  for (const auto& op : body->ops()) ops.push_back(op.get());
  bool ends_holding = false;
  for (Operation* op : ops) {
    if (is_wgmma(*op)) ends_holding = true;
    if (op->kind() == OpKind::mma_wait) ends_holding = false;
  }
  bool holding = ends_holding;
  int turns = 0;
  for (Operation* op : ops) {
    ir::OpBuilder b(body);
    b.set_insertion_point_before(op);
    if (is_wgmma(*op) && !holding) {
      b.create(OpKind::turn_wait, {}, {}, op->loc());
      holding = true;
      ++turns;
    } else if (op->kind() == OpKind::mma_wait && holding) {
      b.create(OpKind::turn_pass, {}, {}, op->loc());
      holding = false;
    }
  }
  TESSEL_ASSERT(holding == ends_holding, "turns unbalanced around a loop body");
  if (ends_holding) {
    ir::OpBuilder b(loop->parent_block());
    b.set_insertion_point_before(loop);
    b.create(OpKind::turn_wait, {}, {}, loop->loc());
    b.set_insertion_point_before(next_op(loop));
    b.create(OpKind::turn_pass, {}, {}, loop->loc());
  }
  return turns;
}

void run(Operation* kernel) {
  Operation* grid = nullptr;
  for (const auto& op : kernel->region(0)->ops())
    if (op->kind() == OpKind::block_grid) grid = op.get();
  if (!grid) return;
  const std::optional<bool> pinned = pinned_flag(*grid, "pingpong");
  if (pinned != true) return;  // opt-in (header, "When")
  bool any = false;
  for (const auto& op : kernel->region(0)->ops()) {
    Operation* role = op.get();
    if (role->kind() != OpKind::warp_group || role->has_attr("issue") ||
        role->int_attr("threads") < 256)
      continue;
    std::vector<Operation*> loops = qualifying_loops(role);
    if (loops.empty()) continue;
    any = true;
    for (Operation* loop : loops) {
      std::vector<Operation*> sync;
      for (const auto& inner : loop->region(0)->ops())
        if (is_wgmma(*inner) && !inner->has_attr("async")) sync.push_back(inner.get());
      for (Operation* mma : sync) make_explicit(mma);
      const int turns = place_turns(loop);
      report("pingpong", std::string("for ") + ir::value_ref(loop->region(0)->argument(0)) +
                             " at " + loop->loc().str() + ": " + std::to_string(turns) +
                             " turn(s) per iteration among the role's " +
                             std::to_string(role->int_attr("threads") / 128) + " warpgroups" +
                             (sync.empty() ? ""
                                           : ", " + std::to_string(sync.size()) +
                                                 " synchronous wgmma(s) made explicit"));
    }
    // The first turn goes to warpgroup 0, before anything else the role does (after setmaxnreg).
    ir::Block* body = role->region(0);
    size_t i = 0;
    while (i < body->ops().size() && body->ops()[i]->kind() == OpKind::setmaxnreg) ++i;
    ir::OpBuilder b(body);
    if (i < body->ops().size()) b.set_insertion_point_before(body->ops()[i].get());
    b.create(OpKind::turn_begin, {}, {}, role->loc());
  }
  if (pinned == true && !any) {
    user_error(grid->loc(),
               "block_grid: pingpong = true is pinned but no consumer role of two or more "
               "warpgroups has a loop with wgmma and register work beside it");
  }
}

}  // namespace

void pingpong_consumers(ir::Module& module) {
  for (const auto& kernel : module.kernels) run(kernel.get());
}

}  // namespace tessel::transforms
