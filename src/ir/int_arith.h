// Integer arithmetic with the IR's semantics, shared by the canonicalizer's folder and the
// interpreter so that folding can never change a result.
//
// Values are computed in 64-bit two's complement and wrapped to the type's width (sign-extended for
// signed types, zero-extended for unsigned ones; i1 is 0 or 1). `div` and `rem` truncate toward
// zero as in C++; `cdiv` is ceil(a / b) for b > 0. Division by zero has no result (nullopt).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ir/ir.h"

namespace tessel::ir {

int64_t wrap_integer(ScalarKind kind, int64_t value);

// The value of an integer elementwise op (unary: b ignored; select: use select directly). `pred` is
// the cmp predicate. nullopt when the op has no integer meaning or divides by zero.
std::optional<int64_t> eval_integer(OpKind op, ScalarKind kind, int64_t a, int64_t b,
                                    std::string_view pred = {});

// Whether an index-typed scalar is never negative, from how it is made: constants >= 0, sizes,
// grid indices, SM counts, cluster ranks; sums, products, quotients, cdivs and minima of such,
// a remainder of such a dividend, a maximum with one such operand; a `sub` marked `nonneg` (a
// pass's statement, which the interpreter checks); find_group's results; a loop's induction variable
// whose lower bound is one (steps are positive); a loop-carried value, and the loop's result,
// whose initial value and every yielded value are (by induction: a cycle through carried values
// is assumed to hold). The CUDA emitter divides such values unsigned (a shift or a mask for a
// power of two, where a signed division or remainder costs five instructions). Anything else,
// `sub` included, is not known to be.
bool never_negative(const Value* v);

}  // namespace tessel::ir
