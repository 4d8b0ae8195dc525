#include "transforms/async/share_rings.h"

#include <map>
#include <vector>

#include "ir/async.h"

namespace tessel::transforms {
namespace {

using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::Value;

// The ops of one aref in one role, in program order, and what the rewrite needs of them.
struct Use {
  std::vector<Operation*> ops;
  Block* block = nullptr;      // the block their loop (or they) stand in
  Value* base = nullptr;       // persistent's per-tile base of their numbers, or none
  Value* trip = nullptr;       // the trip count of the loop that acquires or waits
  size_t first = 0, last = 0;  // positions in that block of the first and last op's ancestor
};

// `op`'s ancestor in `block`, or nullptr.
Operation* ancestor_in(Operation* op, const Block* block) {
  for (Operation* o = op; o; o = o->parent_op()) {
    if (o->parent_block() == block) return o;
  }
  return nullptr;
}

// The base of a number: `add %base, %n` with %base an argument of an enclosing loop's block.
Value* base_of(Value* number) {
  const Operation* def = number->def();
  if (!def || def->kind() != OpKind::add) return nullptr;
  Value* b = def->operand(0);
  if (b->def() || !b->owner_block() || !b->owner_block()->parent() ||
      b->owner_block()->parent()->kind() != OpKind::for_) {
    return nullptr;
  }
  return b;
}

class Sharer {
 public:
  explicit Sharer(Operation& kernel) : kernel_(kernel), top_(kernel.region(0)) {}

  void run() {
    std::vector<Operation*> arefs, roles;
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::aref) arefs.push_back(op.get());
      if (op->kind() == OpKind::warp_group) roles.push_back(op.get());
    }
    for (size_t i = 0; i + 1 < arefs.size(); ++i) {
      if (!arefs[i]) continue;
      for (size_t j = i + 1; j < arefs.size(); ++j) {
        if (!arefs[j] || !(arefs[i]->result()->type() == arefs[j]->result()->type())) continue;
        if (try_merge(arefs[i], arefs[j], roles)) arefs[j] = nullptr;
        break;  // only the next ring of the same type follows this one's loop directly
      }
    }
  }

 private:
  // The uses of `aref` in `role`, or false when they do not have the shape the rewrite needs.
  static bool uses_in(Operation* aref, Operation* role, Use& u) {
    ir::walk(role, [&](Operation* op) {
      if (ir::is_aref_use(op->kind()) && op->operand(0) == aref->result()) u.ops.push_back(op);
    });
    if (u.ops.empty()) return true;
    const Operation* loop = nullptr;
    for (Operation* op : u.ops) {
      if (op->kind() != OpKind::aref_acquire && op->kind() != OpKind::aref_wait) continue;
      const Operation* p = op->parent_op();
      if (!p || p->kind() != OpKind::for_ || (loop && loop != p)) return false;
      loop = p;
    }
    if (!loop || ir::int_constant(loop->operand(0)) != 0 || ir::int_constant(loop->operand(2)) != 1)
      return false;
    u.trip = loop->operand(1);
    u.block = loop->parent_block();
    u.base = base_of(u.ops.front()->operand(1));
    for (Operation* op : u.ops) {
      if (base_of(op->operand(1)) != u.base) return false;
      Operation* a = ancestor_in(op, u.block);
      if (!a) return false;
      const size_t at = ir::position_in_block(*a);
      u.last = op == u.ops.front() ? at : std::max(u.last, at);
      u.first = op == u.ops.front() ? at : std::min(u.first, at);
    }
    return true;
  }

  bool try_merge(Operation* a, Operation* b, const std::vector<Operation*>& roles) {
    std::vector<std::pair<Use, Use>> per_role;
    for (Operation* role : roles) {
      Use ua, ub;
      if (!uses_in(a, role, ua) || !uses_in(b, role, ub)) return false;
      if (ua.ops.empty() && ub.ops.empty()) continue;
      if (ua.ops.empty() || ub.ops.empty() || ua.block != ub.block || ua.last >= ub.first)
        return false;
      per_role.emplace_back(std::move(ua), std::move(ub));
    }
    if (per_role.empty()) return false;
    for (auto& [ua, ub] : per_role) {
      // Computed at the head of the block the loops stand in (the bases are its arguments or
      // outer ones; the trip count is defined before the first loop, outside it).
      Operation* head = ua.block->ops().front().get();
      if (ub.base) renumber(ua.ops, ub.base);
      Value* shift = ua.trip;
      if (ua.base) {
        ir::OpBuilder b(ua.block);
        b.set_insertion_point_before(head);
        shift = b.index_op(OpKind::add, ua.base, ua.trip, "ring_shift", a->loc());
      }
      renumber(ub.ops, shift);
    }
    a->set_attr("slots", ir::Attribute::integer(a->int_attr("slots") + b->int_attr("slots")));
    ir::walk(&kernel_, [&](Operation* op) {
      for (int i = 0; i < op->num_operands(); ++i)
        if (op->operand(i) == b->result()) op->set_operand(i, a->result());
    });
    top_->remove(b);
    return true;
  }

  // Each op's number n becomes n + shift, computed just before it (once per block for a number
  // several ops of one block share: an acquire and its commit, a wait and its release).
  static void renumber(const std::vector<Operation*>& ops, Value* shift) {
    std::map<std::pair<Value*, Block*>, Value*> done;
    for (Operation* op : ops) {
      Value* n = op->operand(1);
      Value*& shifted = done[{n, op->parent_block()}];
      if (!shifted) {
        ir::OpBuilder b(op->parent_block());
        b.set_insertion_point_before(op);
        shifted = b.index_op(OpKind::add, n, shift, "seq_shared", op->loc());
      }
      op->set_operand(1, shifted);
    }
  }

  Operation& kernel_;
  Block* top_;
};

}  // namespace

void share_rings(ir::Module& module) {
  for (const auto& kernel : module.kernels) Sharer(*kernel).run();
}

}  // namespace tessel::transforms
