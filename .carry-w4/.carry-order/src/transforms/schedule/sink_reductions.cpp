// SinkReductions (sink_reductions.h).
#include "transforms/schedule/sink_reductions.h"

#include <memory>
#include <vector>

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::MemorySpace;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

// The ops of the kernel that use `v`.
std::vector<Operation*> users(Operation* kernel, const Value* v) {
  std::vector<Operation*> out;
  ir::walk(kernel, [&](Operation* op) {
    for (int i = 0; i < op->num_operands(); ++i)
      if (op->operand(i) == v) {
        out.push_back(op);
        return;
      }
  });
  return out;
}

bool plain_f32_register(const Value* v) {
  const Type& t = v->type();
  return t.is_tensor() && t.space() == MemorySpace::reg && t.element() == ScalarKind::f32 &&
         !t.has_layout() && ir::is_static(t.shape());
}

int64_t elements(const Value* v) {
  int64_t n = 1;
  for (int64_t e : v->type().static_shape()) n *= e;
  return n;
}

bool is_zero_fill(const Value* v) {
  const Operation* d = v->def();
  if (!d || d->kind() != OpKind::fill) return false;
  const Attribute* a = d->attr("value");
  return a && ((a->kind == Attribute::Kind::real && a->f == 0.0) ||
               (a->kind == Attribute::Kind::integer && a->i == 0));
}

bool has_mma(const ir::Block& body) {
  for (const auto& op : body.ops())
    if (op->kind() == OpKind::mma) return true;
  return false;
}

// Sinks the reduction of carried value i of `loop` when it matches; true when it did.
bool sink(Operation* kernel, Operation* loop, int i) {
  ir::Block* body = loop->region(0);
  Operation* yield = body->terminator();
  Value* arg = body->argument(1 + i);
  Value* init = loop->operand(3 + i);
  Value* out = loop->result(i);
  if (!yield || !plain_f32_register(arg)) return false;
  std::vector<Operation*> arg_users = users(kernel, arg);
  if (arg_users.size() != 1) return false;
  Operation* add = arg_users[0];
  if (add->kind() != OpKind::add || add->parent_block() != body ||
      yield->operand(i) != add->result())
    return false;
  if (users(kernel, add->result()).size() != 1) return false;
  Value* s = add->operand(0) == arg ? add->operand(1) : add->operand(0);
  Operation* reduce = s->def();
  if (!reduce || reduce->kind() != OpKind::reduce || reduce->parent_block() != body) return false;
  const Attribute* kind = reduce->attr("kind");
  if (!kind || kind->s != "sum" || users(kernel, s).size() != 1) return false;
  Value* x = reduce->operand(0);
  if (!plain_f32_register(x) || elements(x) > kMaxSunkElements) return false;
  if (s->type() != arg->type() || init->type() != arg->type()) return false;

  const Type partial = x->type();
  const Type reduced = arg->type();
  // The carried partial starts at zero, before the loop.
  OpBuilder before(loop->parent_block());
  before.set_insertion_point_before(loop);
  Operation* zero = before.create(OpKind::fill, {}, {partial}, loop->loc());
  zero->set_attr("value", Attribute::real(0.0));
  zero->result()->set_name(x->name() + "_sum0");
  loop->set_operand(3 + i, zero->result());
  arg->set_type(partial);
  // In the body: the add takes the reduced tensor itself.
  add->set_operand(add->operand(0) == arg ? 1 : 0, x);
  add->result()->set_type(partial);
  std::unique_ptr<Operation> gone = body->remove(reduce);
  // After the loop: one reduction, plus the initial value unless it is zero; every use of the
  // loop's result after it reads that.
  std::vector<Operation*> out_users = users(kernel, out);
  out->set_type(partial);
  // Just before the first op of the loop's block that reads the result (the row sums' store),
  // so the reduction does not stand between the loop and the rest of the epilogue.
  OpBuilder after(loop->parent_block());
  const auto& ops = loop->parent_block()->ops();
  size_t at = ir::position_in_block(*loop) + 1;
  for (size_t j = at; j < ops.size(); ++j) {
    bool reads = false;
    ir::walk(ops[j].get(), [&](Operation* o) {
      for (int k = 0; k < o->num_operands(); ++k) reads = reads || o->operand(k) == out;
    });
    if (reads) {
      at = j;
      break;
    }
  }
  if (at < ops.size()) after.set_insertion_point_before(ops[at].get());
  Operation* red = after.create(OpKind::reduce, {out}, {reduced}, gone->loc());
  red->set_attr("dims", *gone->attr("dims"));
  red->set_attr("kind", *gone->attr("kind"));
  red->result()->set_name(out->name().empty() ? "sum" : out->name() + "_sum");
  Value* total = red->result();
  if (!is_zero_fill(init)) {
    Operation* plus = after.create(OpKind::add, {init, total}, {reduced}, gone->loc());
    plus->result()->set_name(red->result()->name() + "_all");
    total = plus->result();
  }
  for (Operation* u : out_users)
    for (int k = 0; k < u->num_operands(); ++k)
      if (u->operand(k) == out) u->set_operand(k, total);
  // The old initial value, a zero fill no one reads now, goes.
  if (is_zero_fill(init) && users(kernel, init).empty())
    init->def()->parent_block()->remove(init->def());
  return true;
}

}  // namespace

void sink_reductions(ir::Module& module) {
  for (auto& kernel : module.kernels) {
    std::vector<Operation*> loops;
    ir::walk(kernel.get(), [&](Operation* op) {
      if (op->kind() == OpKind::for_ && has_mma(*op->region(0))) loops.push_back(op);
    });
    for (Operation* loop : loops)
      for (int i = 0; i + 3 < loop->num_operands(); ++i) sink(kernel.get(), loop, i);
  }
}

}  // namespace tessel::transforms
