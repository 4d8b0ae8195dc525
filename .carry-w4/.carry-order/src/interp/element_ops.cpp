// The scalar semantics of tile-IR elements.
#include "interp/element_ops.h"

#include <cmath>

#include "support/diagnostics.h"

namespace tessel::interp {

using ir::OpKind;
namespace {

template <typename T>
T unary_float(OpKind kind, T x) {
  // For T = float these overloads are the C library's float functions (expf, sqrtf, ...).
  switch (kind) {
    case OpKind::neg:
      return -x;
    case OpKind::abs:
      return std::fabs(x);
    case OpKind::exp:
      return std::exp(x);
    case OpKind::exp2:
      return std::exp2(x);
    case OpKind::log:
      return std::log(x);
    case OpKind::log2:
      return std::log2(x);
    case OpKind::sqrt:
      return std::sqrt(x);
    case OpKind::rsqrt:
      return T(1) / std::sqrt(x);
    case OpKind::tanh:
      return std::tanh(x);
    case OpKind::sigmoid:
      return T(1) / (T(1) + std::exp(-x));
    case OpKind::floor:
      return std::floor(x);
    default:
      TESSEL_ASSERT(false, ir::op_info(kind).name, " is not a unary float op");
      return x;
  }
}

template <typename T>
T binary_float(OpKind kind, T a, T b) {
  switch (kind) {
    case OpKind::add:
      return a + b;
    case OpKind::sub:
      return a - b;
    case OpKind::mul:
      return a * b;
    case OpKind::div:
      return a / b;
    case OpKind::rem:
      return std::fmod(a, b);
    case OpKind::max:
      return std::fmax(a, b);
    case OpKind::min:
      return std::fmin(a, b);
    default:
      TESSEL_ASSERT(false, ir::op_info(kind).name, " is not a binary float op");
      return a;
  }
}

bool compare_float(std::string_view pred, double a, double b) {
  if (pred == "lt") return a < b;
  if (pred == "le") return a <= b;
  if (pred == "gt") return a > b;
  if (pred == "ge") return a >= b;
  if (pred == "eq") return a == b;
  return a != b;
}

}  // namespace

Element element_from_double(ScalarKind kind, double value) {
  Element e;
  if (ir::is_float(kind)) {
    e.f = round_to(kind, value);
  } else {
    e.i = float_to_int(kind, value);
  }
  return e;
}

Element element_from_int(ScalarKind kind, int64_t value) {
  Element e;
  if (ir::is_float(kind)) {
    e.f = kind == ScalarKind::f32 ? static_cast<float>(value)
                                  : round_to(kind, static_cast<double>(value));
  } else {
    e.i = ir::wrap_integer(kind, value);
  }
  return e;
}

Element element_from_attr(ScalarKind kind, const ir::Attribute& attr) {
  return attr.kind == ir::Attribute::Kind::real ? element_from_double(kind, attr.f)
                                                : element_from_int(kind, attr.i);
}

Element convert(ScalarKind from, ScalarKind to, Element e) {
  if (ir::is_float(from)) return element_from_double(to, e.f);
  if (to == ScalarKind::i1) return Element{0, e.i != 0};
  return element_from_int(to, e.i);
}

Element unary(OpKind op, ScalarKind kind, Element a) {
  if (ir::is_integer(kind)) {
    auto r = ir::eval_integer(op, kind, a.i, 0);
    TESSEL_ASSERT(r, ir::op_info(op).name, " has no integer meaning");
    return Element{0, *r};
  }
  if (kind == ScalarKind::f64) return Element{unary_float<double>(op, a.f), 0};
  return Element{round_to(kind, unary_float<float>(op, static_cast<float>(a.f))), 0};
}

std::optional<Element> binary(OpKind op, ScalarKind kind, Element a, Element b,
                              std::string_view pred) {
  if (op == OpKind::cmp) {
    if (ir::is_float(kind)) return Element{0, compare_float(pred, a.f, b.f) ? 1 : 0};
    return Element{0, *ir::eval_integer(OpKind::cmp, kind, a.i, b.i, pred)};
  }
  if (ir::is_integer(kind)) {
    auto r = ir::eval_integer(op, kind, a.i, b.i);
    if (!r) return std::nullopt;
    return Element{0, *r};
  }
  if (kind == ScalarKind::f64) return Element{binary_float<double>(op, a.f, b.f), 0};
  return Element{
      round_to(kind, binary_float<float>(op, static_cast<float>(a.f), static_cast<float>(b.f))), 0};
}

Element ternary(OpKind op, ScalarKind kind, Element a, Element b, Element c) {
  if (op == OpKind::select) return a.i ? b : c;
  TESSEL_ASSERT(op == OpKind::fma, ir::op_info(op).name, " is not a ternary op");
  if (kind == ScalarKind::f64) return Element{std::fma(a.f, b.f, c.f), 0};
  return Element{round_to(kind, std::fma(static_cast<float>(a.f), static_cast<float>(b.f),
                                         static_cast<float>(c.f))),
                 0};
}

Element apply_elementwise(const ir::Operation& op, ScalarKind kind, const Element* x) {
  switch (ir::op_info(op.kind()).arity) {
    case 1:
      return unary(op.kind(), kind, x[0]);
    case 2: {
      auto r = binary(
          op.kind(), kind, x[0], x[1],
          op.kind() == OpKind::cmp ? std::string_view(op.str_attr("pred")) : std::string_view());
      if (!r) user_error(op.loc(), op.name(), ": integer division by zero");
      return *r;
    }
    default:
      return ternary(op.kind(), kind, x[0], x[1], x[2]);
  }
}

}  // namespace tessel::interp
