// ExpToExp2: an f32 `exp` whose results reach the program's outputs only as 16-bit floats, through
// arithmetic that cannot magnify a relative error, is computed as 2^(x·log2 e) by one ex2.approx.
//
// Why. `exp` emits expf's accurate sequence (a range reduction and corrections around the
// MUFU.EX2, ~10 instructions); `exp2` emits one MUFU.EX2 (target/cuda/emit_elementwise.cpp).
// Softmax written with `exp` computes it twice per element and is issue-bound on the H200:
// 0.80-0.91 of a copy kernel's bandwidth at N >= 16384 where the same program written with exp2
// reaches 0.93-1.03 (bench/results/2026-11-28-rows-h200.md). Triton's tl.exp and FlashAttention
// use ex2.approx unconditionally; tessel does it only where the error cannot show.
//
// The error. exp(x) = exp2(x·log2 e) with the product rounded to f32 and ex2.approx.ftz: the
// product's rounding moves the exponent by at most |x·log2 e|·2^-24, a relative error of
// |x|·2^-24 in the result, under 2^-17.5 wherever expf is neither infinite nor subnormal
// (|x| < 88.7); ex2.approx adds at most 2^-22 (PTX ISA). So one approximated exp is within
// u = 2^-17 of the exact value, relative. (Results under 2^-126 flush to zero, as they do in every
// ftz path: they reach a 16-bit output as zero unless later multiplied by more than 2^100, which
// the pass does not rule out.)
//
// The rule. Every value gets a bound, in units of u, on the relative error the approximated exps
// put in it: an approximated exp 1; mul and div the sum of their operands' bounds; max, min,
// broadcast, rearrange, cast to f32, select (of the values, not the condition), sqrt, rsqrt the
// largest; add and sum reductions the largest too, fma the larger of its product's and its
// addend's, but only over non-negative operands
// (exp's results, their products and sums, non-negative constants: nothing cancels); a loop-
// carried value the largest of its initial and yielded values — where that grows every iteration
// (a carried sum multiplied by an approximated exp each time: softmax's online rescale), the
// bound is unbounded. A cast to f16 or bf16 ends a path: its input's bound times u must be under a
// sixteenth of the type's half-ulp (f16: bound <= 2, since u·2 = 2^-16 = 2^-12 / 16; bf16: <= 16;
// fp8 likewise). Any other use of a value with a bound — a sub or neg (cancellation), a compare,
// an index, an f32 store, another transcendental — and the exps it came from stay accurate.
//
// The exps are chosen one at a time, each kept only if the analysis with it and the ones already
// kept passes. In softmax: the per-element exps of both loops are approximated; the rescale of
// the running sum by exp(m_old - m_new), once per row and tile, stays accurate.
//
// `exp {accurate}` keeps expf's sequence whatever the analysis finds. The rewrite, on f32 values:
//   %e = exp %x  ->  %e_log2e = const {value = 1.4426950408889634} : f32 ;
//                    %e_arg = mul %x, %e_log2e ; %e = exp2 %e_arg
// Runs before schedule-rows (which treats a program with an accurate exp per element as
// issue-bound), on every kernel.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

void exp_to_exp2(ir::Module& module);

}  // namespace tessel::transforms
