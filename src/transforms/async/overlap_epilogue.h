// OverlapEpilogue: in a persistent consumer role, the stores of tile t's output run during the
// mainloop of tile t+1, one part per K block, while that block's wgmma group computes.
//
// Why. After stage-stores and persistent, a consumer finishes tile t's mainloop, converts the
// accumulator, and then writes its parts through shared memory (per part: wait for the buffer,
// role_sync, stmatrix, fence, role_sync, TMA store) before it issues tile t+1's first wgmma: the
// tensor cores idle for the whole sequence, every tile. The producer has filled the ring for tile
// t+1 by then, so the wgmmas could start at once. The hand-written reference GEMM keeps the
// converted tile in registers (16-bit pairs: 64 per thread for 64x256) and stores one part during
// each of the next tile's first K blocks, after the block's wgmmas are issued and before waiting
// for them; it gained 1-4% at M = N = 8192 (bench/reference/NOTES.md).
//
// What the pass does (after persistent and unswitch-loops, on level-1 IR), to every `for` tile
// loop of a role (at the role's top level or in result-less `if`s there) whose body holds
//   %acc = for %k = 0 to %kt step 1 iter(...) { ... mma_commit ... }     (the mainloop)
//   ...                                                                 (epilogue math)
//   %out = cast %y : register<f16|bf16, L>[R, C]
//   <part 0>  %out_part0 = slice %out ...; copy_async_wait; role_sync; stmatrix copy; ...
//   ...
//   <part P-1>
//   yield ...
// where the parts (every op from the first slice of %out to the yield that the yield does not
// need) use only %out, index scalars of the tile body and values defined outside the loop:
//   - the tile loop carries %out and those scalars to the next iteration (initially a fill of
//     zeros and 0: never stored), and `%has_prev_tile = cmp %tile, %first {pred = ne}` says
//     whether they hold a tile;
//   - before the mainloop, the parts a short mainloop will not reach:
//     `if %has_prev_tile { if (%kt <= i) { <part i> } }` (%kt is the same for every tile, so the
//     parts run in a rotation of their order, k..P-1 then 0..k-1, and each store still follows
//     one from the other buffer, as at the tile boundary before);
//   - the mainloop splits in two at %parts_end = min(%kt, P): a copy of it runs K blocks
//     [0, %parts_end) with, right after its `mma_commit`,
//       if %has_prev_tile { %at_part0 = cmp %k, 0 {pred = eq}  if %at_part0 { <part 0> } ... }
//     and the original runs [%parts_end, %kt), carrying the accumulators on (the emitter keeps
//     them in place). A branch per part in every K block, without the split, stalled the
//     consumers' instruction fetch (ncu: no_instruction 3% -> 9-17%);
//   - after the tile loop, the last tile's parts: `if (%first < %end) { <parts of the results> }`.
// Unless pinned, the overlapped loop runs only for mainloops of at least 16 K blocks: the tile loop
// becomes `if (kt >= 16) { <overlapped loop> } else { <the loop as it was> }` (kt, the K loop's
// trip count, is computed before the tile loop and is the same for every tile); at K = 704 the
// overlapped loop was 2-3% slower on the H100 (overlap_epilogue.cpp, kMinKBlocks).
// The staging protocol is unchanged (each part waits for the store that last read its buffer);
// only the wgmma group of the current K block runs beside the stores.
//
// Registers. The carried tile costs (R x C / threads) / 2 registers per thread beside the
// mainloop's accumulators; the epilogue's operands read into registers after the mainloop (a bias
// row) live beside the accumulators when the tile is converted, after the previous tile is
// stored. The pass applies only while accumulator values plus the larger of the two stay within
// kCarriedRegisterBudget (192: the reference GEMM's 128 + 64, which ptxas fits in the consumers'
// 232 registers without spills). gemm and gemm_bf16 (128 + 64) are overlapped, and so is
// gemm_bias_relu (128 + max(64, 32): its 64 bias values per thread held as 32 pairs; read into
// floats they made ptxas spill 40 bytes, and the overlapped kernel ran at 0.94x cuBLASLt at
// 3000x5000x704, bench/results/2026-11-25-overlap-epilogue-h100.md); dual_gemm (2 x 64 + 32)
// would fit but is left alone unless pinned: with two accumulators it measured slower overlapped
// at every shape.
// The emitter keeps a carried 16-bit tile as packed pairs (one 32-bit register per two values).
//
// Several output tiles (the LSTM cells' c' and h': 16-bit casts whose slices the stores take)
// are carried alike, each stored in its own parts (the first output's parts first); that form
// runs only where pinned (`overlap_epilogue = true`) until it is measured on the H100.
//
// Tile loops whose parts the role's threads copy out of shared memory themselves (stage-stores'
// fallback for rows TMA cannot store) are left alone: their copy loop needs the registers the
// carried tile would hold (ptxas spilled 68-212 bytes).
//
// Pins: `overlap_epilogue = false` on the block_grid leaves the epilogue after the mainloop
// (for comparison); `true` overlaps at every K and also a dual GEMM's two accumulators (both
// measured slower, kept for experiments), and makes it a user error, naming why for each tile
// loop, when no tile loop of the kernel could be overlapped.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Overlaps the staged epilogue of every persistent consumer tile loop with the next tile's
// mainloop (see above).
void overlap_epilogue(ir::Module& module);

}  // namespace tessel::transforms
