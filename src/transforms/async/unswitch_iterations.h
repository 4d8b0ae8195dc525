// UnswitchIterations: a loop body whose branch sits where wgmma groups are in flight becomes one
// branch over the whole body, each copy with the branch resolved (opt-in: `unswitch_iterations =
// true` on the block_grid, until measured on the GPU).
//
// Why. ptxas drains every wgmma group in flight at a control-flow join (WARPGROUP.DEPBAR.LE gsb0,
// 0x0 at the join). Attention's coarse-pipelined loop issues S of key tile j + 1 and P·V of tile
// j, waits for S, and runs the softmax of tile j + 1 beside P·V; specialize-masks' `if
// %all_kept` (the key tile needs no mask) sits in that window, so ptxas retires P·V before the
// softmax and nothing overlaps (SASS of flash_attention.tir, 2026-11-27). With the branch over
// the whole iteration the join is at the iteration's end, after its last mma_wait, and in the
// copy without the mask (every key tile but the last) the softmax's MUFU.EX2 run under P·V; the
// masked copy still drains, once per query tile. The pin `specialize_masks = false` removes the
// branch instead, for ~92 more instructions a thread a key tile.
//
// What the pass does (on level-2 IR, after lower-arefs and pingpong-consumers), for each `for`
// in a role whose body, at its top level,
//   - has an `if %c` with results after an `mma_wait {pending = P}` with P > 0 and before the
//     next `mma_wait {pending = 0}` (a branch inside an open window of wgmma groups), and
//   - computes %c from the loop's block arguments and values defined outside the loop through
//     scalar index arithmetic only (const, add, sub, mul, div, rem, min, max, cmp):
// the body becomes
//   <the ops that compute %c, copied>
//   %r = if %c' { <the body, the `if %c` replaced by its then-branch>; yield <the body's yield> }
//        else   { <the body, the `if %c` replaced by its else-branch>; yield <...> }
//   yield %r
// Each branch issues, waits and arrives exactly as the body did (the protocol check verifies
// both); only the first such `if` of a body is hoisted.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Unswitches the iterations of every kernel whose block_grid pins `unswitch_iterations = true`.
void unswitch_iterations(ir::Module& module);

}  // namespace tessel::transforms
