// Canonicalization: folds constant scalar arithmetic, applies algebraic identities, merges
// duplicate constants and sizes, and removes ops whose results nobody uses and that have no effect.
//
// It runs to a fixed point. Folding follows the interpreter's integer semantics exactly (64-bit
// two's complement wrapped to the type's width, division truncating toward zero, cdiv rounding up
// for non-negative operands), and folds only integer and index arithmetic, never floating point, so
// it can never change a result.
#pragma once

#include "ir/ir.h"

namespace tessel::ir {

void canonicalize(Module& module);
void canonicalize_kernel(Operation& kernel);

// Replaces every use of `from` inside `root` (and its regions) by `to`.
void replace_all_uses(Operation& root, Value* from, Value* to);

}  // namespace tessel::ir
