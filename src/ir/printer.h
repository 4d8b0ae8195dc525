// Prints the tile IR as text that parse_module reads back (print -> parse -> print is identical).
//
// Every op but kernel/for/if prints in one uniform form:
//     %r0, %r1 = NAME %operand, ... {key = value, flag, ...} : RESULT_TYPE, ...
// and the three region ops print as
//     kernel @name[M, N](%A: global<f16>[M,N], %s: f32) facts(N % 8 == 0) ready(%A) { ... }
//     %r = for %k = %lo to %hi step %step iter(%c = %init) : TYPE { ... yield %c1 }
//     %r = if %cond : TYPE { ... yield %a } else { ... yield %b }
// Value names come from the values' name hints, made unique within a kernel.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tessel::ir {

std::string print(const Module& module);
std::string print_kernel(const Operation& kernel);

}  // namespace tessel::ir
