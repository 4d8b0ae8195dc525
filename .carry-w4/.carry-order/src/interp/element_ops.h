// The scalar semantics of tile-IR elements, in one place for both interpreters.
//
// The thread-level interpreter proves layout synthesis correct by producing the same results as
// the tile-level interpreter; that proof is only as good as the two agreeing on what one element
// op computes. So neither defines it: both call these functions, which implement the rules that
// interp/interpreter.h documents:
//  - f32 arithmetic is C++ `float` arithmetic (the C library's float functions for
//    transcendentals), f64 is `double`; f16, bf16 and fp8 compute in f32 and round to the element
//    type (RNE, interp/numerics.h);
//  - integers compute in 64 bits and wrap to their width (ir/int_arith.h);
//  - conversions round to nearest even (fp8 saturating); float to int truncates and saturates.
// An element is an `Element`: its exact value in `f` for float kinds, in `i` for integer kinds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "interp/numerics.h"
#include "ir/int_arith.h"
#include "ir/ir.h"

namespace tessel::interp {

// One element at its exact value: `f` for float kinds, `i` for integer kinds.
struct Element {
  double f = 0;
  int64_t i = 0;
};

// A value given as a double (an f64 literal, say) or as an integer, as an element of `kind`
// (rounded, saturated or wrapped as a cast would).
Element element_from_double(ScalarKind kind, double value);
Element element_from_int(ScalarKind kind, int64_t value);
// A `real` or `int` attribute (a constant's or fill's value) as an element of `kind`.
Element element_from_attr(ScalarKind kind, const ir::Attribute& attr);
// The element's value as a double (integers converted).
inline double element_as_double(ScalarKind kind, Element e) {
  return ir::is_float(kind) ? e.f : static_cast<double>(e.i);
}
// A value stored as a double (floats exactly, integers converted exactly) back as an element.
inline Element element_of_double(ScalarKind kind, double stored) {
  return ir::is_float(kind) ? Element{stored, 0} : Element{0, static_cast<int64_t>(stored)};
}

// `cast` of one element.
Element convert(ScalarKind from, ScalarKind to, Element e);

// The unary elementwise ops (neg, abs, exp, ..., floor; neg/abs on integers too).
Element unary(ir::OpKind op, ScalarKind kind, Element a);
// The binary elementwise ops computed in `kind`; `pred` is cmp's predicate (the result of cmp is
// an i1 element). nullopt for an integer division by zero.
std::optional<Element> binary(ir::OpKind op, ScalarKind kind, Element a, Element b,
                              std::string_view pred = {});
// fma (in `kind`) and select (`a` is the i1 condition, `kind` the type of b and c).
Element ternary(ir::OpKind op, ScalarKind kind, Element a, Element b, Element c);

// One elementwise op on its operands' elements, computed in `kind` (the first operand's element
// type; the second's for select). Integer division by zero is a UserError naming the op.
Element apply_elementwise(const ir::Operation& op, ScalarKind kind, const Element* operands);

// One step of mma's reduction: acc + a * b with `in` the operands' and `acc_kind` the
// accumulator's element type (f32 product and sum for float inputs, rounded to f16 accumulators;
// f64 in double; 64-bit integers wrapped to the accumulator's width). Inline: it is the
// interpreters' innermost loop.
inline Element multiply_add(ScalarKind in, ScalarKind acc_kind, Element acc, Element a, Element b) {
  if (ir::is_integer(in)) return Element{0, ir::wrap_integer(acc_kind, acc.i + a.i * b.i)};
  if (acc_kind == ScalarKind::f64) return Element{acc.f + a.f * b.f, 0};
  float p = static_cast<float>(a.f) * static_cast<float>(b.f);
  float s = static_cast<float>(acc.f) + p;
  if (acc_kind != ScalarKind::f32) s = static_cast<float>(round_to(acc_kind, s));
  return Element{s, 0};
}

}  // namespace tessel::interp
