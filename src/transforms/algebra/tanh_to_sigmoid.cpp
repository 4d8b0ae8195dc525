// TanhToSigmoid (tanh_to_sigmoid.h).
#include "transforms/algebra/tanh_to_sigmoid.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ir/canonicalize.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

class Rewriter {
 public:
  explicit Rewriter(Operation* kernel) : kernel_(kernel) {}

  void run() {
    for (Operation* op : ops())
      if (op->kind() == OpKind::add || op->kind() == OpKind::sub) tanh_to_sigmoid(op);
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation* op : ops())
        if (op->kind() == OpKind::mul) changed = gather_powers_of_two(op) || changed;
    }
  }

 private:
  std::vector<Operation*> ops() const {
    std::vector<Operation*> out;
    ir::walk(kernel_, [&](Operation* op) { out.push_back(op); });
    return out;
  }

  int uses(const Value* v) const {
    int n = 0;
    ir::walk(kernel_, [&](Operation* op) {
      for (int i = 0; i < op->num_operands(); ++i) n += op->operand(i) == v;
    });
    return n;
  }

  static bool is_f32(const Value* v) { return v->type().element() == ScalarKind::f32; }

  // The value of a scalar float constant.
  static std::optional<double> constant(const Value* v) {
    const Operation* d = v->def();
    if (!d || d->kind() != OpKind::constant || !v->type().is_scalar() ||
        !ir::is_float(v->type().element()))
      return std::nullopt;
    const Attribute* a = d->attr("value");
    if (!a) return std::nullopt;
    if (a->kind == Attribute::Kind::real) return a->f;
    if (a->kind == Attribute::Kind::integer) return double(a->i);
    return std::nullopt;
  }

  static bool power_of_two(double c) {
    if (c == 0 || !std::isfinite(c)) return false;
    int e;
    return std::fabs(std::frexp(c, &e)) == 0.5;
  }

  // `%name = const {value = c} : f32`, just before `at`.
  static Value* make_constant(Operation* at, double c, const std::string& name) {
    OpBuilder b(at->parent_block());
    b.set_insertion_point_before(at);
    Operation* k = b.create(OpKind::constant, {}, {Type::scalar(ScalarKind::f32)}, at->loc());
    k->set_attr("value", Attribute::real(c));
    k->result()->set_name(name);
    return k->result();
  }

  // Removes `v`'s defining op when nothing reads it any more, and then its operands' likewise
  // (arithmetic and constants only: nothing with an effect, nothing that declares the grid).
  void remove_if_dead(Value* v) {
    Operation* d = v ? v->def() : nullptr;
    if (!d || uses(v) != 0 || !d->regions().empty() || d->num_results() != 1) return;
    if (d->kind() != OpKind::constant && !ir::is_elementwise(d->kind())) return;
    std::vector<Value*> operands;
    for (int i = 0; i < d->num_operands(); ++i) operands.push_back(d->operand(i));
    d->parent_block()->remove(d);
    for (Value* o : operands) remove_if_dead(o);
  }

  // `1 + tanh z` (either order) or `1 - tanh z` as 2σ(±2z).
  void tanh_to_sigmoid(Operation* op) {
    const bool minus = op->kind() == OpKind::sub;
    for (int t_at = minus ? 1 : 0; t_at < 2; ++t_at) {
      Value* t = op->operand(t_at);
      Value* one = op->operand(1 - t_at);
      Operation* tanh = t->def();
      if (!tanh || tanh->kind() != OpKind::tanh || tanh->attr("approx")) continue;
      if (constant(one) != 1.0 || !is_f32(t) || !is_f32(op->result()) || uses(t) != 1) continue;
      Value* z = tanh->operand(0);
      const std::string base = t->name().empty() ? "t" : t->name();
      Value* twice = make_constant(op, minus ? -2.0 : 2.0, base + "_k");
      OpBuilder b(op->parent_block());
      b.set_insertion_point_before(op);
      Operation* z2 = b.create(OpKind::mul, {z, twice}, {z->type()}, tanh->loc());
      z2->result()->set_name(base + "_arg");
      Operation* s = b.create(OpKind::sigmoid, {z2->result()}, {t->type()}, tanh->loc());
      s->result()->set_name(base + "_sigmoid");
      Value* two = make_constant(op, 2.0, base + "_two");
      Operation* r = b.create(OpKind::mul, {s->result(), two}, {op->result()->type()}, op->loc());
      r->result()->set_name(op->result()->name());
      ir::replace_all_uses(*kernel_, op->result(), r->result());
      std::vector<Value*> old = {op->operand(0), op->operand(1)};
      op->parent_block()->remove(op);
      for (Value* v : old) remove_if_dead(v);
      return;
    }
  }

  // `%p = mul %x, C` (either order) used once, as (x, C); nullopt otherwise.
  struct Scaled {
    Value* x;
    double c;
  };
  std::optional<Scaled> scaled(Value* p) {
    Operation* d = p->def();
    if (!d || d->kind() != OpKind::mul || !is_f32(p) || uses(p) != 1) return std::nullopt;
    for (int k = 0; k < 2; ++k)
      if (auto c = constant(d->operand(k)))
        if (d->operand(1 - k)->type() == p->type()) return Scaled{d->operand(1 - k), *c};
    return std::nullopt;
  }

  bool gather_powers_of_two(Operation* q) {
    if (!is_f32(q->result())) return false;
    // x·1 -> x (where the folding left a product by one: 0.5 (1 + tanh(z/2)) is σ(z)).
    for (int k = 0; k < 2; ++k) {
      if (constant(q->operand(k)) != 1.0 || q->operand(1 - k)->type() != q->result()->type())
        continue;
      Value* x = q->operand(1 - k);
      Value* one = q->operand(k);
      ir::replace_all_uses(*kernel_, q->result(), x);
      q->parent_block()->remove(q);
      remove_if_dead(one);
      return true;
    }
    // (x·C)·P -> x·(C·P).
    for (int k = 0; k < 2; ++k) {
      auto p_const = constant(q->operand(k));
      if (!p_const || !power_of_two(*p_const)) continue;
      Value* p = q->operand(1 - k);
      auto inner = scaled(p);
      if (!inner) continue;
      const std::string name =
          q->operand(k)->name().empty() ? "k" : q->operand(k)->name() + "_folded";
      Value* folded = make_constant(q, inner->c * *p_const, name);
      Value* old = q->operand(k);
      q->set_operand(0, inner->x);
      q->set_operand(1, folded);
      remove_if_dead(p);
      remove_if_dead(old);
      return true;
    }
    // (x·P)·(y·Q) -> x·y where P·Q = 1.
    auto a = scaled(q->operand(0));
    auto b = scaled(q->operand(1));
    if (a && b && power_of_two(a->c) && a->c * b->c == 1.0 && q->operand(0) != q->operand(1)) {
      Value* pa = q->operand(0);
      Value* pb = q->operand(1);
      q->set_operand(0, a->x);
      q->set_operand(1, b->x);
      remove_if_dead(pa);
      remove_if_dead(pb);
      return true;
    }
    return false;
  }

  Operation* kernel_;
};

}  // namespace

void tanh_to_sigmoid(ir::Module& module) {
  for (auto& kernel : module.kernels) Rewriter(kernel.get()).run();
}

}  // namespace tessel::transforms
