// SpecializeMasks: a mask built from index arithmetic is tested once per tile, and the tiles where
// it keeps every element skip it (FlashAttention masks only the last key tile and the diagonal).
//
// Why. Attention masks its scores with `select (iota + j*128 < S), s, -inf` (key columns past the
// sequence) or `select (col <= row), s, -inf` (causal). As written, every key tile builds the
// index tensors, compares and selects: about 200 of the ~700 instructions a consumer thread runs
// per 128x128 tile, though only the last tile (and, causal, the diagonal one) masks anything.
//
// What. For `%r = select %c, %a, %b` on register tensors where `%c = cmp %x, %y {pred}` (lt, le,
// gt or ge) and each of %x, %y is an index scalar or an *affine iota* — `iota {dim = d}`, or
// `add` of one and an index scalar, over the select's shape — the extremes of each side are
// scalars (an affine iota along d of extent E with offset s spans [s, s + E - 1]), so "every
// element compares true" is one scalar comparison: lt: max x < min y; le: max x <= min y;
// gt: min x > max y; ge: min x >= max y. The select becomes
//   %all = cmp <max or min of x>, <min or max of y> {pred}
//   %r = if %all { yield %a } else { <the iota/add/cmp chain>; %r' = select %c, %a, %b; yield %r' }
// with the chain's ops that only the mask uses (and that sit in the select's block) moved into the
// else branch. Results are unchanged: the then branch is taken only when the select would have
// taken %a everywhere. Runs after layout synthesis (the if's results take the select's type,
// layout included) and before warp-specialize (the consumer keeps the if like any op).
// `specialize_masks = false` on the block_grid leaves every select as written (no branch where
// wgmma groups are in flight: ptxas drains them at the join; see the .cpp).
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Specializes every qualifying select of `module`'s kernels (rules above).
void specialize_masks(ir::Module& module);

}  // namespace tessel::transforms
