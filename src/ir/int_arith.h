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

}  // namespace tessel::ir
