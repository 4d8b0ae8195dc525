// TanhToSigmoid: 1 ± tanh(z) is computed as 2·σ(±2z), and powers of two in products are gathered.
//
// Why. GELU's tanh form, 0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³))) — PyTorch's
// gelu(approximate='tanh'), and how a frontend or a user writes it — spends most of its issue
// slots in tanhf (a sequence of ~20 instructions around an ex2 and a reciprocal without fast
// math), where σ is one ex2 and one reciprocal (target/cuda/emit_elementwise.cpp). On the H200
// bias + GELU is issue-bound: the tanh form measured 0.81-0.91 of a copy, h·σ(2z) written by
// hand 0.98-1.00 where its tiles are whole (bench/results/2026-11-28-rows-pins-h200.md). The
// identity is exact (1 + tanh(z) = 2σ(2z), 1 - tanh(z) = 2σ(-2z)), and more accurate where tanh z
// is near ∓1: 1 ± tanh(z) loses its leading digits to cancellation there, 2σ(±2z) keeps them.
//
// The rewrite, on f32 values (scalars or register tensors), tanh without {approx} (a program that
// asks for the hardware's tanh keeps it), the tanh used only by this add or sub:
//   %t = tanh %z ; %r = add %t, %one  (either order)   ->  %z2 = mul %z, 2.0 ; %s = sigmoid %z2 ;
//   %t = tanh %z ; %r = sub %one, %t                   ->    %r = mul %s, 2.0  (-2.0 for sub)
// Then the powers of two are gathered: a product by 2^e rounds nowhere (short of overflow and
// underflow), so (x·c)·2^e = x·(c·2^e) and (x·2^a)·(y·2^b) = x·y where 2^(a+b) = 1 round alike:
//   %p = mul %x, C ; %q = mul %p, P   ->  %q = mul %x, C·P        (P a power of two, %p used once)
//   %p = mul %x, P ; %q = mul %y, Q ; %r = mul %p, %q  ->  %r = mul %x, %y   (P·Q = 1, both
//                                                                              used once)
// and a product by one left over goes (0.5·(1 + tanh(z·0.5)) becomes sigmoid %z). So the GELU
// above becomes %s = sigmoid (h + 0.044715·h³)·2√(2/π) and %y = mul %h, %s: the 0.5 and both 2s
// are gone. Runs before schedule-rows, on every kernel.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

void tanh_to_sigmoid(ir::Module& module);

}  // namespace tessel::transforms
