#include "transforms/async/defer_stores.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "transforms/async/store_parts.h"
#include "transforms/report.h"
#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

struct Plan {
  Operation* loop = nullptr;
  Operation* guard = nullptr;      // the `if` whose then block issues the first wgmma
  Operation* first_mma = nullptr;  // that wgmma (synchronous)
  std::vector<Operation*> moved;   // the parts' ops, in program order
  std::vector<Value*> carried;     // values of the tile body the parts use (the tile first)
};

// The first mma at the top level of `block`, or null.
Operation* first_mma_in(Block& block) {
  for (const auto& op : block.ops())
    if (op->kind() == OpKind::mma) return op.get();
  return nullptr;
}

// Why `loop` cannot be changed, or "" with `plan` filled in.
std::string analyze(Operation& loop, Plan& plan) {
  Block& body = *loop.region(0);
  const auto& ops = body.ops();
  if (ops.empty() || ops.back()->kind() != OpKind::yield) return "the tile loop carries nothing";
  // The output tile: a 16-bit register cast whose slices are stored.
  const std::optional<OutputTile> output = find_output_tile(body);
  if (!output) return "no 16-bit output tile is stored in parts (stage-stores' slices)";
  const Operation* cast = output->cast;
  const size_t cast_at = output->cast_at, first_slice = output->first_slice;
  const Value* out = cast->result();
  // The first wgmma of the tile: synchronous, at the top of an `if`'s then block, its result
  // worked on in registers (read by an op other than an mma).
  for (size_t i = 0; i < cast_at && !plan.guard; ++i) {
    Operation& op = *ops[i];
    if (op.kind() == OpKind::for_) return "a loop runs before the tile's first wgmma's guard";
    if (op.kind() != OpKind::if_ || op.regions().size() != 2) continue;
    Operation* mma = first_mma_in(*op.region(0));
    if (!mma) continue;
    plan.guard = &op;
    plan.first_mma = mma;
  }
  if (!plan.guard) return "no `if` before the output issues the tile's first wgmma";
  Operation& mma = *plan.first_mma;
  if (mma.has_attr("async")) return ir::op_where(mma) + " is already asynchronous";
  bool read_in_registers = false;
  ir::walk(plan.guard, [&](Operation* o) {
    if (o->kind() == OpKind::mma) return;
    for (const Value* v : o->operands()) read_in_registers = read_in_registers || v == mma.result();
  });
  if (!read_in_registers) {
    return ir::op_where(mma) +
           "'s result is not worked on in registers (not an attention prologue)";
  }

  // Ops from the first slice to the yield: those the yield needs stay (pure index arithmetic),
  // the rest move.
  const size_t yield_at = ops.size() - 1;
  std::unordered_set<const Value*> needed(ops.back()->operands().begin(),
                                          ops.back()->operands().end());
  std::vector<bool> kept(ops.size(), false);
  for (size_t i = yield_at; i-- > first_slice;) {
    bool needs = false;
    for (const auto& r : ops[i]->results()) needs = needs || needed.count(r.get());
    if (!needs) continue;
    if (!pure_index_op(*ops[i])) {
      return "the tile loop's yield needs " + ir::op_where(*ops[i]) + " among the stores";
    }
    kept[i] = true;
    for (const Value* v : ops[i]->operands()) needed.insert(v);
  }
  for (size_t i = first_slice; i < yield_at; ++i) {
    if (kept[i]) continue;
    bool ok = true;
    ir::walk(ops[i].get(), [&](Operation* o) {
      ok = ok && (movable_store_op(*o) || (o != ops[i].get() && o->kind() == OpKind::yield));
    });
    if (!ok) return ir::op_where(*ops[i]) + " stands among the stores but cannot move";
    plan.moved.push_back(ops[i].get());
  }
  // A kept op may not use a moved one.
  std::unordered_set<const Operation*> moved_set;
  for (Operation* op : plan.moved) ir::walk(op, [&](Operation* o) { moved_set.insert(o); });
  for (size_t i = first_slice; i < yield_at; ++i) {
    if (!kept[i]) continue;
    for (const Value* v : ops[i]->operands()) {
      if (v->def() && moved_set.count(v->def())) {
        return ir::op_where(*ops[i]) + " (needed by the yield) uses " + ir::value_ref(v) +
               " of the stores";
      }
    }
  }
  // The values of the tile body the moved ops use: the tile and index scalars are carried.
  const std::string why = collect_carried(loop, plan.moved, {out}, plan.carried);
  if (!why.empty()) return why;
  plan.loop = &loop;
  return "";
}

// Copies the moved ops to the end of `into`, the carried values replaced by `carried_as`.
void place_parts(const Plan& plan, Block* into, const std::vector<Value*>& carried_as) {
  std::unordered_map<const Value*, Value*> mapping;
  for (size_t i = 0; i < plan.carried.size(); ++i) mapping[plan.carried[i]] = carried_as[i];
  for (Operation* op : plan.moved) into->append(ir::clone(*op, mapping));
}

void rewrite(const Plan& plan) {
  Operation& loop = *plan.loop;
  Block& body = *loop.region(0);
  const SourceLocation loc = loop.loc();

  // The tile loop carries the tile and the scalars its stores use; the first tile has none.
  const auto [previous, last, has_prev] = carry_across_tiles(loop, plan.carried);

  // The first wgmma runs while the previous tile's parts are stored.
  Operation& mma = *plan.first_mma;
  mma.set_attr("async", Attribute::unit());
  Block& then_block = *plan.guard->region(0);
  OpBuilder at(&then_block);
  const size_t mma_at = ir::position_in_block(mma);
  at.set_insertion_point_before(then_block.ops()[mma_at + 1].get());
  at.create(OpKind::mma_commit, {}, {}, mma.loc());
  place_parts(plan, make_if(at, has_prev, loc), previous);
  at.create(OpKind::mma_wait, {}, {}, mma.loc())->set_attr("pending", Attribute::integer(0));

  // A tile without key tiles stores the previous tile's parts first.
  Block& else_block = *plan.guard->region(1);
  OpBuilder other(&else_block);
  other.set_insertion_point_before(else_block.ops().front().get());
  place_parts(plan, make_if(other, has_prev, loc), previous);

  // The last tile's parts, after the loop (before the role's trailing waits).
  OpBuilder after(loop.parent_block());
  const size_t loop_at = ir::position_in_block(loop);
  if (loop_at + 1 < loop.parent_block()->ops().size()) {
    after.set_insertion_point_before(loop.parent_block()->ops()[loop_at + 1].get());
  }
  Value* ran = after.compare("lt", loop.operand(0), loop.operand(1), "any_tile_stored", loc);
  place_parts(plan, make_if(after, ran, loc), last);

  for (auto it = plan.moved.rbegin(); it != plan.moved.rend(); ++it) body.remove(*it);
}

// The tile loops of a role: `for` ops at its top level or in result-less `if`s there
// (unswitch-loops' copies).
void tile_loops(Block& block, std::vector<Operation*>& found) {
  for (const auto& op : block.ops()) {
    if (op->kind() == OpKind::if_ && op->num_results() == 0) {
      for (const auto& r : op->regions()) tile_loops(*r, found);
    } else if (op->kind() == OpKind::for_) {
      found.push_back(op.get());
    }
  }
}


}  // namespace

void defer_stores(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    const Operation* grid = kernel_grid(*kernel) ? kernel_grid(*kernel) : kernel.get();
    const std::optional<bool> pin = grid_flag(*kernel, "defer_stores");
    // Opt-in until measured on the GPU (see the header).
    if (pin != true) continue;
    int changed = 0;
    std::string reasons;
    for (const auto& role : kernel->region(0)->ops()) {
      if (role->kind() != OpKind::warp_group) continue;
      bool issues_mma = false;  // a consumer role
      ir::walk(role.get(),
               [&](Operation* op) { issues_mma = issues_mma || op->kind() == OpKind::mma; });
      if (!issues_mma) continue;
      std::vector<Operation*> loops;  // collected first: the rewrite inserts ops beside them
      tile_loops(*role->region(0), loops);
      for (Operation* op : loops) {
        Plan plan;
        const std::string why = analyze(*op, plan);
        if (why.empty()) {
          rewrite(plan);
          ++changed;
          report("pipeline", "tile loop " + ir::value_ref(op->region(0)->argument(0)) + " (" +
                                 ir::op_where(*op) + "): the stores run in the next tile beside " +
                                 ir::op_where(*plan.first_mma) + " (" +
                                 std::to_string(plan.carried.size()) + " value(s) carried)");
        } else {
          reasons += "; the tile loop at " + ir::op_where(*op) + ": " + why;
        }
      }
    }
    if (pin == true && changed == 0) {
      user_error(grid->loc(),
                 "defer-stores: defer_stores = true but no consumer tile loop's stores can run "
                 "beside the next tile's first wgmma",
                 reasons.empty() ? std::string(" (no consumer role loops over tiles: is the kernel "
                                               "warp-specialized and persistent?)")
                                 : reasons);
    }
  }
}

}  // namespace tessel::transforms
