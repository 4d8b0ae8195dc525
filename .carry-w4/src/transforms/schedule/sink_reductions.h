// SinkReductions: a sum a mainloop accumulates row by row every step is summed once after it.
//
// Why. In a loop that feeds the tensor cores (a `for` whose body has an mma), a warp-specialized
// consumer issues the next step's wgmma only after this step's SIMT work. A reduction across
// threads every step (GEMM + row reduction over the A tile: 4 rows x 3 butterfly shuffle levels
// per thread and step) lengthens that path: measured on the H100 at 8192³ the fused row sums cost
// 17% over the plain GEMM that way, 6% with the reduction out of the loop, which makes the fused
// kernel 1.004-1.040x cuBLAS + torch.sum instead of 0.91-0.94x
// (bench/results/2026-11-26-task-gemm-rowsum-h100.md). Σ_k reduce(x_k) = reduce(Σ_k x_k): the
// loop adds the reduced tensors themselves, elementwise (no shuffles), and one reduce follows it.
//
// The pattern, on a `for` whose body (directly) holds an mma, before layout synthesis: a carried
// register value %r (f32, no pinned layout) whose only use in the body is
//   %s = reduce %x {dims = [d], kind = sum}     (%x a static f32 register tensor, %s used once)
//   %r_next = add %r, %s                        (either order; yielded for %r, used once)
// with %x of at most kMaxSunkElements elements. It becomes
//   %x_sum0 = fill {value = 0.0} : register<f32>[shape of %x]   (the carried init, before the loop)
//   %r_next = add %r, %x : register<f32>[shape of %x]            (in place of the add; reduce gone)
//   %r_red = reduce %r_out {dims = [d], kind = sum}              (after the loop)
//   %r_all = add %r0, %r_red                                     (unless %r0 is a zero fill)
// and the loop's result %r_out is replaced by that sum everywhere after the loop. The sum's order
// changes (each element over K first, then across the row), as any reassociation of f32 adds does.
// Loops without an mma (row programs: schedule-rows chooses their residency) are left alone.
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace tessel::transforms {

// 128 x 64 f32: 32 registers a thread over a 256-thread consumer, beside a 128x256 accumulator.
inline constexpr int64_t kMaxSunkElements = 128 * 64;

void sink_reductions(ir::Module& module);

}  // namespace tessel::transforms
