// UnswitchIterations: finding a branch in an open window of wgmma groups and hoisting it over
// the loop body (the rules are in the header).
#include "transforms/async/unswitch_iterations.h"

#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::Value;

// The ops of `body` (in body order) that compute `cond` from the loop's block arguments and
// values defined outside `loop`, or nullopt when it needs anything else.
std::optional<std::vector<Operation*>> condition_chain(const Value* cond, const Operation& loop,
                                                       const Block& body) {
  std::set<const Operation*> chain;
  std::vector<const Value*> work{cond};
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!ir::defined_inside(v, loop)) continue;
    Operation* def = v->def();
    if (!def) {  // a block argument: the loop's own (its index, carried values) only
      if (v->owner_block() != &body) return std::nullopt;
      continue;
    }
    if (def->parent_block() != &body ||
        !(def->kind() == OpKind::constant || ir::is_index_arithmetic(def->kind())) ||
        def->result()->type().is_tensor())
      return std::nullopt;
    if (!chain.insert(def).second) continue;
    for (const Value* u : def->operands()) work.push_back(u);
  }
  std::vector<Operation*> ordered;
  for (const auto& op : body.ops())
    if (chain.count(op.get())) ordered.push_back(op.get());
  return ordered;
}

// The first `if` with results at the top of `body` that sits after an mma_wait leaving groups
// pending and before the next mma_wait {pending = 0}.
Operation* branch_in_window(const Block& body) {
  bool open = false;
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::mma_wait) open = op->int_attr("pending") > 0;
    if (open && op->kind() == OpKind::if_ && op->num_results() > 0) return op.get();
  }
  return nullptr;
}

// Copies the ops of `body` but its yield into `into`, with `branch` replaced by the ops of its
// region `taken` (the values that region yields standing for the branch's results); returns the
// body's yield operands as mapped.
std::vector<Value*> copy_resolved(const Block& body, const Operation& branch, int taken,
                                  Block& into, std::unordered_map<const Value*, Value*> mapping) {
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::yield) break;
    if (op.get() != &branch) {
      into.append(ir::clone(*op, mapping));
      continue;
    }
    const std::vector<Value*> given = ir::inline_block(*branch.region(taken), into, mapping);
    for (int i = 0; i < branch.num_results(); ++i) mapping[branch.result(i)] = given[size_t(i)];
  }
  std::vector<Value*> out;
  if (const Operation* yield = body.terminator())
    for (Value* v : yield->operands()) {
      auto it = mapping.find(v);
      out.push_back(it == mapping.end() ? v : it->second);
    }
  return out;
}

void unswitch(Operation& loop) {
  Block& body = *loop.region(0);
  Operation* branch = branch_in_window(body);
  if (!branch) return;
  auto chain = condition_chain(branch->operand(0), loop, body);
  if (!chain) return;
  const Operation* yield = body.terminator();
  // The condition, computed again at the top of the body.
  std::unordered_map<const Value*, Value*> top;
  std::vector<std::unique_ptr<Operation>> hoisted;
  for (Operation* op : *chain) hoisted.push_back(ir::clone(*op, top));
  // (A condition the loop does not compute is used as it is; unswitch-loops takes such ones
  // out of role loops, but not out of a loop nested in a role's branch.)
  Value* cond = top.count(branch->operand(0)) ? top.at(branch->operand(0)) : branch->operand(0);
  auto whole = std::make_unique<Operation>(OpKind::if_, branch->loc());
  whole->add_operand(cond);
  Block* then_block = whole->add_region();
  Block* else_block = whole->add_region();
  if (yield) {
    for (int i = 0; i < yield->num_operands(); ++i)
      whole->add_result(yield->operand(i)->type(), "iteration_" + std::to_string(i));
  }
  for (int taken : {0, 1}) {
    Block& into = taken == 0 ? *then_block : *else_block;
    std::vector<Value*> out = copy_resolved(body, *branch, taken, into, {});
    auto y = std::make_unique<Operation>(OpKind::yield, yield ? yield->loc() : loop.loc());
    for (Value* v : out) y->add_operand(v);
    into.append(std::move(y));
  }
  // The new body: the hoisted condition, the branch, a yield of its results.
  while (!body.ops().empty()) body.remove(body.ops().back().get());
  for (auto& op : hoisted) body.append(std::move(op));
  Operation* placed = body.append(std::move(whole));
  auto y = std::make_unique<Operation>(OpKind::yield, loop.loc());
  for (const auto& r : placed->results()) y->add_operand(r.get());
  body.append(std::move(y));
}

}  // namespace

void unswitch_iterations(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    if (grid_flag(*kernel, "unswitch_iterations") != true) continue;
    // Innermost first: unswitching a loop copies the loops in its body, which are done by then.
    std::vector<Operation*> loops;
    ir::walk(kernel.get(), [&](Operation* op) {
      if (op->kind() == OpKind::for_) loops.push_back(op);
    });
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) unswitch(**it);
  }
}

}  // namespace tessel::transforms
