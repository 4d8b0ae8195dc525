// DeferStores: in a persistent consumer role whose tile starts with a synchronous wgmma (the
// coarse-pipelined attention loop's prologue: S of the first key tile), the staged stores of
// tile t's output run in tile t+1 while that wgmma computes.
//
// Why. After coarse-pipeline and persistent, an attention consumer ends tile t with the last
// P·V, the output's conversion and its staged store (per 128x64 part: wait for the buffer,
// role_sync, stmatrix, fence, role_sync, TMA store), then starts tile t+1 with S = Q·K₀ᵀ issued
// and waited for at once: the stores run with the tensor cores idle, and S runs with the
// warpgroups idle. ncu's stall samples of flash_attention at B*H = 128, L = 1K put 3.9% of the
// consumers' samples in the store and 3.4% in S of the first key tile
// (bench/results/2026-11-26-attention-short-h100.md). The overlap-epilogue pass does the same
// for GEMM mainloops (their first K blocks); attention's first wgmma stands in coarse-pipeline's
// `if n > 0` prologue, after overlap-epilogue has run.
//
// What the pass does (after coarse-pipeline, before lower-arefs, on level-1 IR), to every `for`
// tile loop of a consumer role (at its top level or in result-less `if`s there) whose body holds
//   %r... = if %any { ...; %s = mma ... (no `async`: waited at once); ...; yield ... } else {...}
//   ...                                                   (the epilogue math)
//   %out = cast %y : register<f16|bf16>[R, C]
//   <part 0> %out_part0 = slice %out ...; copy_async_wait; role_sync; stmatrix copy; ...
//   ...
//   yield ...
// where %s is the first mma of the `if`'s then block (at its top level), some op other than an
// mma reads %s (the softmax: the register work coarse-pipeline rotates), and the parts (every op
// from the first slice of %out to the yield that the yield does not need) are stage-stores' ops
// and index arithmetic using only %out, index scalars of the tile body and values defined outside
// the loop:
//   - the tile loop carries %out and those scalars to the next iteration (initially zeros and 0,
//     never stored), and `%has_prev_tile = cmp %tile, %first {pred = ne}` says whether they hold
//     a tile;
//   - the mma becomes `async`, followed by `mma_commit`, `if %has_prev_tile { <the parts> }` and
//     `mma_wait {pending = 0}` (before whatever followed the mma: the K slot's release);
//   - the else branch (no key tiles in this tile) stores the previous tile's parts first;
//   - after the loop, the last tile's parts: `if (%first < %end) { <parts of the results> }`
//     (before the role's final `copy_async_wait {pending = 0}`).
// The parts keep their order (tile t's before tile t+1's), so the staging buffers alternate as
// before and each part still waits for the store that last read its buffer.
//
// Registers. The carried tile costs (R x C / threads) / 2 registers per thread (32 for attention's
// 128x128 f16 output over 256 threads); it is live from the tile's start to the first wgmma's wait,
// beside that wgmma's accumulator, and dead in the key loop.
//
// Pins: the pass runs only where the block_grid pins `defer_stores = true` (and then it is a user
// error, naming why for each tile loop, when no tile loop could be changed); without the pin, or
// with `false`, the stores stay at the end of the tile. Opt-in because it measured slower: predicted
// from the profile above up to 3% faster at L = 1K (the store's 3.9% of the consumers' samples
// beside S's 3.4%), it was 7 points slower at 1K and 6 at 4K on the H100
// (bench/results/2026-11-26-attention-short-h100.md, call 5), not profiled. Then the store's
// role_syncs spanned both consumer warpgroups, which made them meet inside the deferred wgmma's
// window; stage-stores now syncs attention's stores by warpgroup, not yet measured with this pass.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Defers every persistent consumer tile loop's staged output stores into the next tile's first
// wgmma (see above).
void defer_stores(ir::Module& module);

}  // namespace tessel::transforms
