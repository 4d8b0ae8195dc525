// Canonicalization of the tile IR.
#include "ir/canonicalize.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "ir/async.h"
#include "ir/int_arith.h"

namespace tessel::ir {
namespace {

// Ops that only compute their results: removable when nothing uses them.
bool is_pure(const Operation& op) {
  switch (op.kind()) {
    case OpKind::copy:
      return op.num_operands() == 1;  // a load into a new tensor; a store has an effect
    case OpKind::transpose:
    case OpKind::aref_slot:
    case OpKind::aref:
      return true;
    case OpKind::yield:
    case OpKind::call_external:
    case OpKind::block_grid:  // declares the grid
    case OpKind::kernel:
      return false;
    case OpKind::for_:
    case OpKind::if_: {
      for (const auto& region : op.regions()) {
        for (const auto& inner : region->ops()) {
          if (inner->kind() != OpKind::yield && !is_pure(*inner)) return false;
        }
      }
      return true;
    }
    default:
      // Roles, aref and barrier traffic, wgmma groups: effects on other threads.
      return !is_async_op(op.kind());
  }
}

class Canonicalizer {
 public:
  explicit Canonicalizer(Operation& kernel) : kernel_(kernel) {}

  void run() {
    for (int round = 0; round < 100; ++round) {
      changed_ = false;
      count_uses();
      simplify_block(*kernel_.region(0));
      merge_duplicates(*kernel_.region(0));
      count_uses();
      remove_dead(*kernel_.region(0));
      if (!changed_) return;
    }
  }

 private:
  void count_uses() {
    uses_.clear();
    walk(&kernel_, [&](Operation* op) {
      for (Value* v : op->operands()) ++uses_[v];
    });
  }

  void replace(Value* from, Value* to) {
    replace_all_uses(kernel_, from, to);
    changed_ = true;
  }

  // Makes `%c = const value : type` just before `before` and returns its result.
  Value* make_constant(Operation* before, const Type& type, int64_t value) {
    Block* block = before->parent_block();
    size_t position = 0;
    while (block->ops()[position].get() != before) ++position;
    auto op = std::make_unique<Operation>(OpKind::constant, before->loc());
    op->set_attr("value", Attribute::integer(value));
    Operation* raw = block->insert(position, std::move(op));
    return raw->add_result(
        type, "c" + std::to_string(value < 0 ? -value : value) + (value < 0 ? "_neg" : ""));
  }

  void simplify_block(Block& block) {
    for (size_t i = 0; i < block.ops().size(); ++i) {
      Operation* op = block.ops()[i].get();
      for (const auto& region : op->regions()) simplify_block(*region);
      if (!is_elementwise(op->kind()) || op->num_results() != 1) continue;
      const Type& t = op->result()->type();
      if (!t.is_scalar() || !is_integer(t.element())) continue;
      if (uses_[op->result()] == 0) continue;
      if (fold(op, t)) {
        i = 0;  // the block changed under us; positions shifted by the inserted constant
        count_uses();
      }
    }
  }

  // Folds or simplifies one integer scalar op; true when it replaced the result.
  bool fold(Operation* op, const Type& t) {
    OpKind kind = op->kind();
    ScalarKind element = op->operand(op->kind() == OpKind::select ? 1 : 0)->type().element();
    std::vector<std::optional<int64_t>> c;
    for (Value* v : op->operands()) c.push_back(int_constant(v));
    if (kind == OpKind::select) {
      if (c[0]) {
        replace(op->result(), op->operand(*c[0] ? 1 : 2));
        return true;
      }
      if (op->operand(1) == op->operand(2)) {
        replace(op->result(), op->operand(1));
        return true;
      }
      return false;
    }
    int arity = op_info(kind).arity;
    if (arity <= 2 && c[0] && (arity == 1 || c[1])) {
      std::string pred = op->has_attr("pred") ? op->str_attr("pred") : "";
      auto value = eval_integer(kind, element, *c[0], arity == 2 ? *c[1] : 0, pred);
      if (!value) return false;
      replace(op->result(), make_constant(op, t, *value));
      return true;
    }
    if (arity != 2) return false;
    Value* a = op->operand(0);
    Value* b = op->operand(1);
    // A kernel's divisibility facts: size % d == 0 makes rem by a divisor of d zero and cdiv by it
    // an exact division.
    if (c[1] && *c[1] > 0 && (kind == OpKind::rem || kind == OpKind::cdiv)) {
      if (int64_t d = known_divisor(a); d % *c[1] == 0) {
        if (kind == OpKind::rem) return replace(op->result(), make_constant(op, t, 0)), true;
        auto div = std::make_unique<Operation>(OpKind::div, op->loc());
        div->add_operand(a);
        div->add_operand(b);
        Block* block = op->parent_block();
        size_t position = 0;
        while (block->ops()[position].get() != op) ++position;
        Operation* raw = block->insert(position, std::move(div));
        replace(op->result(), raw->add_result(t, op->result()->name()));
        return true;
      }
    }
    auto is = [](const std::optional<int64_t>& x, int64_t v) { return x && *x == v; };
    switch (kind) {
      case OpKind::add:
        if (is(c[1], 0)) return replace(op->result(), a), true;
        if (is(c[0], 0)) return replace(op->result(), b), true;
        break;
      case OpKind::sub:
        if (is(c[1], 0)) return replace(op->result(), a), true;
        if (a == b) return replace(op->result(), make_constant(op, t, 0)), true;
        break;
      case OpKind::mul:
        if (is(c[1], 1)) return replace(op->result(), a), true;
        if (is(c[0], 1)) return replace(op->result(), b), true;
        if (is(c[0], 0) || is(c[1], 0)) return replace(op->result(), make_constant(op, t, 0)), true;
        break;
      case OpKind::div:
      case OpKind::cdiv:
        if (is(c[1], 1)) return replace(op->result(), a), true;
        break;
      case OpKind::rem:
        if (is(c[1], 1)) return replace(op->result(), make_constant(op, t, 0)), true;
        break;
      case OpKind::max:
      case OpKind::min:
        if (a == b) return replace(op->result(), a), true;
        break;
      default:
        break;
    }
    return false;
  }

  // The largest divisor the kernel's facts promise for an index value (1 when none is known).
  int64_t known_divisor(const Value* v) const {
    const Operation* def = v->def();
    if (!def || def->kind() != OpKind::size) return 1;
    int64_t d = 1;
    for (const Fact& fact : kernel_.signature().facts) {
      if (fact.symbol == def->str_attr("name")) d = std::max(d, fact.divisor);
    }
    return d;
  }

  // Within one block, a second op that computes the same scalar as an earlier one (same kind,
  // operands, attributes and type: a constant, a size, scalar arithmetic) is replaced by the first.
  // Ops that make tensors are left alone: each makes a fresh tensor.
  static bool is_mergeable(const Operation& op) {
    if (op.num_results() != 1 || !op.regions().empty() || !op.result()->type().is_scalar())
      return false;
    return op.kind() == OpKind::constant || op.kind() == OpKind::size || is_elementwise(op.kind());
  }

  // `outer` holds what enclosing blocks computed before this block's op: those dominate it, so a
  // loop body reuses a constant or an index computed outside the loop.
  void merge_duplicates(Block& block, std::map<std::string, Value*> seen = {}) {
    for (size_t i = 0; i < block.ops().size(); ++i) {
      Operation* op = block.ops()[i].get();
      for (const auto& region : op->regions()) merge_duplicates(*region, seen);
      if (!is_mergeable(*op)) continue;
      std::string key = std::string(op->name()) + " " + op->result()->type().str();
      for (Value* v : op->operands()) key += " %" + std::to_string(reinterpret_cast<uintptr_t>(v));
      for (const auto& [k, v] : op->attributes()) key += " " + k + "=" + v.str();
      auto [it, inserted] = seen.emplace(key, op->result());
      if (!inserted && uses_[op->result()] > 0) {
        replace(op->result(), it->second);
        count_uses();
      }
    }
  }

  void remove_dead(Block& block) {
    for (size_t i = block.ops().size(); i-- > 0;) {
      Operation* op = block.ops()[i].get();
      for (const auto& region : op->regions()) remove_dead(*region);
      if (!is_pure(*op)) continue;
      bool used = false;
      for (const auto& r : op->results()) used = used || uses_[r.get()] > 0;
      if (used) continue;
      for (Value* v : op->operands()) --uses_[v];
      block.remove(op);
      changed_ = true;
    }
  }

  Operation& kernel_;
  bool changed_ = false;
  std::unordered_map<const Value*, int> uses_;
};

}  // namespace

void replace_all_uses(Operation& root, Value* from, Value* to) {
  walk(&root, [&](Operation* op) {
    for (int i = 0; i < op->num_operands(); ++i) {
      if (op->operand(i) == from) op->set_operand(i, to);
    }
  });
}

void canonicalize_kernel(Operation& kernel) {
  Canonicalizer(kernel).run();
}

void canonicalize(Module& module) {
  for (auto& kernel : module.kernels) canonicalize_kernel(*kernel);
}

}  // namespace tessel::ir
