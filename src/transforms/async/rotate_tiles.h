// RotateTiles: coarse-pipeline's rotation carried across a persistent consumer's tile loop, so
// that the first key tile of query tile t+1 is computed beside the last P·V of tile t (attention
// at short sequence lengths; the design note "Across tiles" in coarse_pipeline.h).
//
// Why. After coarse-pipeline each tile of attention's persistent consumer starts with S of its
// first key tile issued and waited for at once, then that tile's softmax with the tensor cores
// idle, and ends with the last P·V waited for at once and the output store. At L = 1K (8 key
// tiles per query tile) that is ~2 us of ~16 per tile and what keeps flash_attention at
// 0.96-0.98 of cuDNN (bench/results/2026-11-27-stores-by-warpgroup-h100.md).
//
// Measured (bench/results/2026-11-27-rotate-tiles-h100.md): correct and sanitizer clean on the
// H100, but 3% slower than the unrotated example at L = 1K (0.936 vs 0.966 of cuDNN) and equal at
// 4K / 16K; so it stays opt-in and no example pins it.
//
// What the pass does (after coarse-pipeline, before lower-arefs, on level-1 IR), where the
// block_grid pins `rotate_tiles = true`, to a consumer role's tile loop
//   for %tile = %first to %tiles step %blocks iter(%tile_seq, %seq_base) {
//     <prefix: index arithmetic, Q's aref_wait, fills, the condition>
//     %r... = if %any { <head: S synchronous, ...softmax> <steady key loop> <tail: last P·V
//                        {async}, mma_commit, mma_wait {pending = 0}, V's release>; yield }
//             else { ... }
//     <suffix: Q's release, the epilogue and its stores>
//     yield %tile_seq + 1, %seq_base + n
//   }
// with %any computed from values outside the loop: under `if %any` it becomes (n_b = the
// block's tile count, cdiv(%tiles - %first, %blocks), at least 1 in a persistent grid)
//   prefix(first); head(first)
//   for %k = 0 to n_b iter(%tile_seq, %seq_base, <the key loop's initial values>) {
//     %tile = first + k blocks; prefix(tile) (Q viewed again, below); the key loop of tile
//     if k + 1 < n_b {
//       prefix(tile + blocks); head(tile + blocks) up to its first mma, made async; mma_commit
//       tail(tile) up to its mma_commit (P·V of the last key tile issued after that S: groups
//       retire in order)
//       mma_wait {pending = 1}; the rest of head(tile + blocks) (K's release, the softmax)
//       mma_wait {pending = 0}; the rest of tail(tile) (V's release); suffix(tile)
//       the rescale of the next tile's fresh O (zeros times its first alpha)
//       yield the next tile's key loop's initial values
//     } else { tail(tile); suffix(tile); yield zeros (not read) }
//     yield the next tile's sequence numbers and the if's results
//   }
// and the loop as it was in the else branch. Each tile computes what it computed before, in the
// same order; only the issue of tile t+1's first S and the softmax after it move before tile t's
// last P·V retires. One loop over every tile (the last one's tail in the else branch) rather than
// a loop over all but the last and the last one after it: fed from a loop's results into a key
// loop after it, the carried values made ptxas spill 320 bytes per thread; this way they always
// enter a key loop through the loop's block arguments, and nothing spills (`ptxas -v`,
// EmitSm90.RotatedAttentionTileLoopStaysAsynchronousAndNothingSpills). Tile t's last P·V then
// stands in both branches, reading the key loop's result: the emitter's rule that a wgmma's
// accumulator has no other reader counts readers in the other branch of an `if` as none.
//
// Registers. Tile t's output in its epilogue beside tile t+1's P (f16 pairs); the rescale of
// tile t+1's fresh O runs after tile t's store, so its 64 registers per thread are not live
// beside the output being stored.
//
// Q. Tile t+1's Q is waited for in iteration t (its first S) and read again in iteration t+1 (the
// rest of its key loop) without a second wait: `aref_slot {held}`, the view of a load its role
// holds (waited for, not released); check-protocol counts reads through it as the same use.
//
// Not rotated (the pin's error says which): a key tile count that depends on the tile (causal:
// `any` is then per tile), a prefix aref of one slot (D = 256's Q: tile t+1's Q would wait for
// tile t's release).
//
// Pins: `rotate_tiles = true` on the block_grid (and then a user error when no tile loop has the
// form); opt-in: written after the session's device time was spent, so correct in the
// interpreter (lit: the example's bits under three role schedules) and accepted by
// check-protocol and ptxas without spills, but not yet run on the H100. Not with
// `pingpong = true` (the turns do not know the rotated tile loop) nor `defer_stores = true`
// (which moved the store already): user errors.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Rotates every persistent consumer tile loop of a kernel pinned `rotate_tiles = true` (above).
void rotate_tiles(ir::Module& module);

}  // namespace tessel::transforms
