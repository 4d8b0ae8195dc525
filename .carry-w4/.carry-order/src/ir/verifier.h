// Checks that tile IR is well formed: types, shapes, memory spaces, dominance, terminators.
//
// The first problem found is thrown as a UserError at the location of the offending op (its C++
// call site when it came from the tile language, its line:column when it came from text), with a
// message that starts with the op's name. What is checked, op by op, is written next to each rule
// in verifier.cpp and verify_tensor_ops.cpp (the async ops' in verify_async.cpp); in short: every
// operand is defined before its use in an enclosing block; register and shared tensors have static
// shapes; copies move between different memory spaces with equal shapes and element types; mma
// multiplies [M,K]·[K,N] into [M,N] with a wide enough accumulator; elementwise operands agree in
// shape and element type; loop-carried values keep their types; a tensor made by `alloc` is
// written before it is read.
#pragma once

#include "ir/ir.h"

namespace tessel::ir {

void verify(const Module& module);
void verify_kernel(const Operation& kernel);

}  // namespace tessel::ir
