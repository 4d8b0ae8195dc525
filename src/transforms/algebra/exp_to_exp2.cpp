// ExpToExp2 (exp_to_exp2.h).
#include "transforms/algebra/exp_to_exp2.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/canonicalize.h"

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

constexpr int64_t kUnbounded = int64_t(1) << 40;
constexpr double kLog2E = 1.4426950408889634;

int64_t saturating_add(int64_t a, int64_t b) {
  return std::min(kUnbounded, a + b);
}

// The largest bound, in units of u = 2^-17 (exp_to_exp2.h), a value may carry into a cast to
// `to`: a sixteenth of the type's relative half-ulp at its smallest (2^-(fraction bits + 2)).
int64_t budget(ScalarKind to) {
  switch (to) {
    case ScalarKind::f16:
      return 2;  // 10 fraction bits: 2^-12 / 16 = 2^-16
    case ScalarKind::bf16:
      return 16;  // 7: 2^-9 / 16 = 2^-13
    case ScalarKind::f8e4m3:
      return 256;  // 3: 2^-5 / 16 = 2^-9
    case ScalarKind::f8e5m2:
      return 512;  // 2: 2^-4 / 16 = 2^-8
    default:
      return -1;  // not a 16-bit or narrower float: no budget
  }
}

bool is_wide_float(ScalarKind k) {
  return k == ScalarKind::f32 || k == ScalarKind::f64;
}

Operation* yield_of(const Block* body) {
  if (body->ops().empty()) return nullptr;
  Operation* last = body->ops().back().get();
  return last->kind() == OpKind::yield ? last : nullptr;
}

// The error bounds of one choice of approximated exps over a kernel.
class Analysis {
 public:
  Analysis(Operation* kernel, const std::unordered_set<const Operation*>& approximated)
      : kernel_(kernel), approximated_(approximated) {}

  // Whether every value the approximated exps reach ends in a 16-bit cast within its budget,
  // through uses that cannot magnify its relative error.
  bool passes() {
    // Bounds only grow and saturate; a loop-carried value that grows every iteration still grows
    // after as many sweeps as any sane nest needs: it is unbounded.
    constexpr int kSweeps = 24;
    std::unordered_set<const Value*> changed;
    for (int i = 0; i < kSweeps; ++i) {
      changed.clear();
      sweep(changed);
      if (changed.empty()) break;
    }
    if (!changed.empty()) {
      for (const Value* v : changed) bound_[v] = kUnbounded;
      for (int i = 0; i < kSweeps; ++i) {
        changed.clear();
        sweep(changed);
        if (changed.empty()) break;
      }
    }
    bool ok = true;
    ir::walk(kernel_, [&](Operation* op) { ok = ok && uses_allowed(op); });
    return ok;
  }

 private:
  int64_t bound(const Value* v) const {
    auto it = bound_.find(v);
    return it == bound_.end() ? 0 : it->second;
  }

  void raise(const Value* v, int64_t b, std::unordered_set<const Value*>& changed) {
    if (b > bound(v)) {
      bound_[v] = b;
      changed.insert(v);
    }
  }

  int64_t largest_operand(const Operation* op) const {
    int64_t b = 0;
    for (int i = 0; i < op->num_operands(); ++i) b = std::max(b, bound(op->operand(i)));
    return b;
  }

  // One pass over the kernel in program order, raising results from operands.
  void sweep(std::unordered_set<const Value*>& changed) {
    ir::walk(kernel_, [&](Operation* op) {
      switch (op->kind()) {
        case OpKind::exp:
          if (approximated_.count(op)) raise(op->result(), 1, changed);
          return;
        case OpKind::mul:
        case OpKind::div:
          raise(op->result(), saturating_add(bound(op->operand(0)), bound(op->operand(1))),
                changed);
          return;
        case OpKind::cast:
          // A cast to a 16-bit float rounds the value to its type: the budget is checked there
          // (uses_allowed), and what follows is an ordinary 16-bit value.
          if (is_wide_float(op->result()->type().element()))
            raise(op->result(), bound(op->operand(0)), changed);
          return;
        case OpKind::select:
          raise(op->result(), std::max(bound(op->operand(1)), bound(op->operand(2))), changed);
          return;
        case OpKind::fma:  // a·b + c: the product's bound, or the addend's (no cancellation)
          raise(op->result(),
                std::max(saturating_add(bound(op->operand(0)), bound(op->operand(1))),
                         bound(op->operand(2))),
                changed);
          return;
        case OpKind::max:
        case OpKind::min:
        case OpKind::add:
        case OpKind::abs:
        case OpKind::sqrt:
        case OpKind::rsqrt:
        case OpKind::broadcast:
        case OpKind::rearrange:
        case OpKind::reduce:
          if (op->num_results() == 1) raise(op->result(), largest_operand(op), changed);
          return;
        case OpKind::for_: {
          const Block* body = op->region(0);
          const Operation* y = yield_of(body);
          for (int i = 0; i < op->num_results(); ++i) {
            int64_t b = bound(op->operand(3 + i));
            if (y && i < y->num_operands()) b = std::max(b, bound(y->operand(i)));
            raise(body->argument(1 + i), b, changed);
            raise(op->result(i), b, changed);
          }
          return;
        }
        case OpKind::if_:
          for (int r = 0; r < 2 && r < int(op->regions().size()); ++r)
            if (const Operation* y = yield_of(op->region(r)))
              for (int i = 0; i < op->num_results() && i < y->num_operands(); ++i)
                raise(op->result(i), bound(y->operand(i)), changed);
          return;
        default:
          return;
      }
    });
  }

  // Whether `op` may read the values with bounds that it reads.
  bool uses_allowed(const Operation* op) {
    bool tainted = false;
    for (int i = 0; i < op->num_operands(); ++i) tainted = tainted || bound(op->operand(i)) > 0;
    if (!tainted) return true;
    auto all_nonnegative = [&] {
      for (int i = 0; i < op->num_operands(); ++i)
        if (!nonnegative(op->operand(i))) return false;
      return true;
    };
    switch (op->kind()) {
      case OpKind::mul:
      case OpKind::div:
      case OpKind::max:
      case OpKind::min:
      case OpKind::abs:
      case OpKind::sqrt:
      case OpKind::rsqrt:
      case OpKind::broadcast:
      case OpKind::rearrange:
        return largest_operand(op) < kUnbounded;
      case OpKind::for_:  // the carried values' initial values (bounds and step are indices)
        return largest_operand(op) < kUnbounded;
      case OpKind::yield: {
        const Operation* parent = op->parent_op();
        return parent && (parent->kind() == OpKind::for_ || parent->kind() == OpKind::if_) &&
               largest_operand(op) < kUnbounded;
      }
      case OpKind::select:
        return bound(op->operand(0)) == 0 && largest_operand(op) < kUnbounded;
      case OpKind::add:
      case OpKind::fma:
        return all_nonnegative() && largest_operand(op) < kUnbounded;
      case OpKind::reduce: {
        const Attribute* kind = op->attr("kind");
        const bool sum = kind && kind->s == "sum";
        return (!sum || all_nonnegative()) && largest_operand(op) < kUnbounded;
      }
      case OpKind::cast: {
        const ScalarKind to = op->result()->type().element();
        if (is_wide_float(to)) return largest_operand(op) < kUnbounded;
        const int64_t b = budget(to);
        return b >= 0 && bound(op->operand(0)) <= b;
      }
      default:
        return false;
    }
  }

  // Whether `v` is never negative (exp's results, their products and sums, non-negative
  // constants); a loop-carried value is, where it enters and is yielded so.
  bool nonnegative(const Value* v) {
    auto memo = nonnegative_.find(v);
    if (memo != nonnegative_.end()) return memo->second;
    if (visiting_.count(v)) return true;  // a loop-carried cycle: decided by its other inputs
    visiting_.insert(v);
    const bool r = compute_nonnegative(v);
    visiting_.erase(v);
    nonnegative_[v] = r;
    return r;
  }

  static bool nonnegative_constant(const Operation* d) {
    const Attribute* a = d->attr("value");
    if (!a) return false;
    if (a->kind == Attribute::Kind::real) return a->f >= 0;  // -inf and NaN are not
    if (a->kind == Attribute::Kind::integer) return a->i >= 0;
    return false;
  }

  bool compute_nonnegative(const Value* v) {
    const Operation* d = v->def();
    if (!d) {
      // A loop's carried value: where it enters and what the body yields.
      const Operation* loop = v->owner_block() ? v->owner_block()->parent() : nullptr;
      if (!loop || loop->kind() != OpKind::for_ || v->index() == 0) return false;
      const int i = v->index() - 1;
      const Operation* y = yield_of(loop->region(0));
      return nonnegative(loop->operand(3 + i)) && y && nonnegative(y->operand(i));
    }
    auto operands_from = [&](int first) {
      for (int i = first; i < d->num_operands(); ++i)
        if (!nonnegative(d->operand(i))) return false;
      return true;
    };
    switch (d->kind()) {
      case OpKind::exp:
      case OpKind::exp2:
      case OpKind::sigmoid:
      case OpKind::abs:
      case OpKind::sqrt:
      case OpKind::rsqrt:
        return true;
      case OpKind::constant:
      case OpKind::fill:
        return nonnegative_constant(d);
      case OpKind::max:
        return nonnegative(d->operand(0)) || nonnegative(d->operand(1));
      case OpKind::mul:
      case OpKind::div:
      case OpKind::min:
      case OpKind::add:
      case OpKind::fma:
      case OpKind::broadcast:
      case OpKind::rearrange:
      case OpKind::reduce:
        return operands_from(0);
      case OpKind::cast:
        return ir::is_float(v->type().element()) && operands_from(0);
      case OpKind::select:
        return operands_from(1);
      case OpKind::for_: {
        const Operation* y = yield_of(d->region(0));
        const int i = v->index();
        return nonnegative(d->operand(3 + i)) && y && nonnegative(y->operand(i));
      }
      case OpKind::if_:
        for (int r = 0; r < 2; ++r) {
          const Operation* y = yield_of(d->region(r));
          if (!y || !nonnegative(y->operand(v->index()))) return false;
        }
        return true;
      default:
        return false;
    }
  }

  Operation* kernel_;
  const std::unordered_set<const Operation*>& approximated_;
  std::unordered_map<const Value*, int64_t> bound_;
  std::unordered_map<const Value*, bool> nonnegative_;
  std::unordered_set<const Value*> visiting_;
};

void rewrite(Operation* kernel, Operation* e) {
  OpBuilder b(e->parent_block());
  b.set_insertion_point_before(e);
  const std::string base = e->result()->name().empty() ? "e" : e->result()->name();
  Operation* k = b.create(OpKind::constant, {}, {Type::scalar(ScalarKind::f32)}, e->loc());
  k->set_attr("value", Attribute::real(kLog2E));
  k->result()->set_name(base + "_log2e");
  Value* x = e->operand(0);
  Operation* arg = b.create(OpKind::mul, {x, k->result()}, {x->type()}, e->loc());
  arg->result()->set_name(base + "_arg");
  Operation* e2 = b.create(OpKind::exp2, {arg->result()}, {e->result()->type()}, e->loc());
  e2->result()->set_name(e->result()->name());
  ir::replace_all_uses(*kernel, e->result(), e2->result());
  e->parent_block()->remove(e);
}

void run(Operation* kernel) {
  std::vector<Operation*> candidates;
  ir::walk(kernel, [&](Operation* op) {
    if (op->kind() == OpKind::exp && !op->has_attr("accurate") &&
        op->result()->type().element() == ScalarKind::f32)
      candidates.push_back(op);
  });
  std::unordered_set<const Operation*> kept;
  for (Operation* c : candidates) {
    kept.insert(c);
    if (!Analysis(kernel, kept).passes()) kept.erase(c);
  }
  for (Operation* c : candidates)
    if (kept.count(c)) rewrite(kernel, c);
}

}  // namespace

void exp_to_exp2(ir::Module& module) {
  for (auto& kernel : module.kernels) run(kernel.get());
}

}  // namespace tessel::transforms
