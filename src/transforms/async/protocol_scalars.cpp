#include "transforms/async/protocol_scalars.h"

#include "ir/grouped.h"
#include "ir/int_arith.h"

namespace tessel::transforms::protocol {

using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Value;

int64_t Scalars::value(const Env& env, const Value* v) const {
  if (const int64_t* x = env.find_or_constant(v)) return *x;
  const Operation* d = v->def();
  if (d) {
    throw Failure{d, "cannot follow " + ir::value_ref(v) +
                         ", which a branch, a loop bound or a barrier index depends on"};
  }
  user_error(kernel_->loc(), "check-protocol: cannot follow ", ir::value_ref(v));
}

DecodedOp Scalars::decode(const Operation& op, const ValueIds& ids) {
  DecodedOp d;
  // What eval below does with the op, decided once: the ops it always refuses, and the integer
  // arithmetic (recognised here only) that arith() computes from its operands' ids.
  if (op.kind() == OpKind::find_group) return d;
  if (op.num_results() != 1 || !op.result()->type().is_scalar() ||
      !ir::is_integer(op.result()->type().element())) {
    d.kind = DecodedOp::not_scalar;
    return d;
  }
  switch (op.kind()) {
    case OpKind::size:
    case OpKind::sm_count:
    case OpKind::counter_arrive:
    case OpKind::constant:
    case OpKind::select:
      return d;
    default:
      break;
  }
  if (!ir::is_elementwise(op.kind()) || op.num_operands() > 2) {
    d.kind = DecodedOp::not_scalar;
    return d;
  }
  if (op.num_operands() == 0) return d;
  for (const Value* v : op.operands()) {
    if (!v->type().is_scalar() || !ir::is_integer(v->type().element())) {
      d.kind = DecodedOp::not_scalar;
      return d;
    }
  }
  d.a = ids.at(op.operand(0));
  d.b = op.num_operands() > 1 ? ids.at(op.operand(1)) : -1;
  d.result = ids.at(op.result());
  if (d.a < 0 || (op.num_operands() > 1 && d.b < 0) || d.result < 0) return d;
  d.kind = DecodedOp::arith;
  d.element = op.operand(0)->type().element();
  if (op.kind() == OpKind::cmp && op.has_attr("pred")) d.pred = op.str_attr("pred");
  return d;
}

void Scalars::arith(const Operation& op, const DecodedOp& d, Env& env) const {
  const int64_t* a = env.find_or_constant_id(d.a);
  const int64_t* b = d.b >= 0 ? env.find_or_constant_id(d.b) : nullptr;
  // An operand not computed yet: value() says which.
  const int64_t x = a ? *a : value(env, op.operand(0));
  const int64_t y = d.b < 0 ? 0 : b ? *b : value(env, op.operand(1));
  auto r = ir::eval_integer(op.kind(), d.element, x, y, d.pred);
  if (!r) throw Failure{&op, "divides by zero on these sizes"};
  env.at_id(d.result) = *r;
}

bool Scalars::eval(const Operation& op, Env& env) const {
  const DecodedOp& d = env.ids().decoded(&op);
  if (d.kind == DecodedOp::not_scalar) return false;
  if (d.kind == DecodedOp::arith) {
    arith(op, d, env);
    return true;
  }
  if (op.kind() == OpKind::find_group) return find_group(op, env);
  if (op.num_results() != 1 || !op.result()->type().is_scalar()) return false;
  ScalarKind k = op.result()->type().element();
  if (!ir::is_integer(k)) return false;
  switch (op.kind()) {
    case OpKind::size:
      env[op.result()] = sizes_->at(op.str_attr("name"));
      return true;
    case OpKind::sm_count:
      env[op.result()] = sm_count_;
      return true;
    case OpKind::counter_arrive:
      env[op.result()] = last_arrival_ ? value(env, op.operand(1)) - 1 : 0;
      return true;
    case OpKind::constant:
      // Nothing to record: value() reads an integer `const` from the kernel's ValueIds.
      return env.find_or_constant(op.result()) != nullptr;
    case OpKind::select:
      env[op.result()] =
          value(env, op.operand(0)) ? value(env, op.operand(1)) : value(env, op.operand(2));
      return true;
    default:
      // Integer arithmetic is DecodedOp::arith (decode, above); nothing else here is a scalar.
      return false;
  }
}

// find_group without the data: groups whose row counts cycle through a pattern that gives a
// group of two tiles (the last partial), an empty group, a group of one row and one of three
// whole tiles, so that tiles of every kind, and tiles past the last group (rows 0: loops of
// zero trips), meet the ring in one run.
bool Scalars::find_group(const Operation& op, Env& env) const {
  const ir::Extent& e = op.operand(0)->type().shape()[0];
  const int64_t groups = e.is_static() ? e.value : sizes_->at(e.symbol);
  const int64_t tile = op.int_attr("tile");
  const int64_t pattern[] = {tile + 1, 0, 1, 3 * tile};
  const ir::GroupTile g =
      ir::find_group_tile(groups, value(env, op.operand(1)), tile, [&](int64_t i) {
        int64_t end = 0;
        for (int64_t j = 0; j <= i; ++j) end += pattern[j % 4];
        return end;
      });
  env[op.result(0)] = g.group;
  env[op.result(1)] = g.tile;
  env[op.result(2)] = g.first;
  env[op.result(3)] = g.rows;
  return true;
}

}  // namespace tessel::transforms::protocol
