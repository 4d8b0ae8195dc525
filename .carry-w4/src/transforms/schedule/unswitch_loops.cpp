#include "transforms/schedule/unswitch_loops.h"

#include <unordered_map>

namespace tessel::transforms {
namespace {

using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::Value;

constexpr int kMaxUnswitches = 3;

// The condition of the first result-less `if` in `loop` that `loop` does not define.
const Value* invariant_condition(const Operation& loop) {
  const Value* found = nullptr;
  ir::walk(const_cast<Operation*>(&loop), [&](Operation* op) {
    if (found || op->kind() != OpKind::if_ || op->num_results() != 0) return;
    if (!ir::defined_inside(op->operand(0), loop)) found = op->operand(0);
  });
  return found;
}

// Replaces every result-less `if %cond` in `root` by the ops of its then (or else) branch.
void resolve(Operation& root, const Value* cond, bool taken) {
  std::vector<Operation*> ifs;
  ir::walk(&root, [&](Operation* op) {
    if (op->kind() == OpKind::if_ && op->num_results() == 0 && op->operand(0) == cond)
      ifs.push_back(op);
  });
  // Innermost first would not matter: an `if %cond` nested in another is resolved the same way.
  for (auto it = ifs.rbegin(); it != ifs.rend(); ++it) {
    Operation* op = *it;
    Block* block = op->parent_block();
    Block* branch = op->region(taken ? 0 : 1);
    size_t at = ir::position_in_block(*op);
    while (!branch->ops().empty()) {
      std::unique_ptr<Operation> inner = branch->remove(branch->ops().front().get());
      block->insert(at++, std::move(inner));
    }
    block->remove(op);
  }
}

bool results_unused(const Operation& loop, Operation& kernel) {
  bool used = false;
  ir::walk(&kernel, [&](Operation* op) {
    for (const Value* v : op->operands()) {
      for (const auto& r : loop.results()) used = used || v == r.get();
    }
  });
  return !used;
}

void unswitch_block(Block& block, Operation& kernel, int depth) {
  for (size_t i = 0; i < block.ops().size(); ++i) {
    Operation* loop = block.ops()[i].get();
    if (loop->kind() != OpKind::for_ || !results_unused(*loop, kernel)) continue;
    const Value* cond = invariant_condition(*loop);
    if (!cond || depth >= kMaxUnswitches) continue;
    auto branch = std::make_unique<Operation>(OpKind::if_, loop->loc());
    branch->add_operand(const_cast<Value*>(cond));
    Block* then_block = branch->add_region();
    Block* else_block = branch->add_region();
    std::unordered_map<const Value*, Value*> mapping;
    then_block->append(ir::clone(*loop, mapping));
    else_block->append(block.remove(loop));
    resolve(*then_block->ops().front(), cond, true);
    resolve(*else_block->ops().front(), cond, false);
    Operation* placed = block.insert(i, std::move(branch));
    unswitch_block(*placed->region(0), kernel, depth + 1);
    unswitch_block(*placed->region(1), kernel, depth + 1);
  }
}

}  // namespace

void unswitch_loops(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    for (const auto& op : kernel->region(0)->ops()) {
      if (op->kind() == OpKind::warp_group) unswitch_block(*op->region(0), *kernel, 0);
    }
  }
}

}  // namespace tessel::transforms
