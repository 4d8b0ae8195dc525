// UnswitchLoops: a role's loop whose body branches on a value the loop does not change becomes a
// branch between two copies of the loop, each with the branch resolved (loop unswitching).
//
// Why. stage-stores sends each part of an output tile by TMA under `if (rows % 8 == 0)`, with a
// fallback copy in the else branch: a condition that holds or fails for the whole kernel. Left in
// the persistent tile loop, both branches' code shares one register allocation: the warp-
// specialized GEMM's consumer, at the 168 registers a 384-thread block gets, spilled ~170 bytes
// and ran at 0.83-0.86x cuBLAS at K = 704..1024 where the same kernel without the guard ran at
// 0.96-0.98x (bench/results/2026-11-24-warp-specialization-h100.md). Two loops, each with one
// epilogue, allocate separately.
//
// What the pass does: for each `for` at the top of a role's region whose results nothing uses,
// the first `if` in its body (at any depth, outside nested roles) whose condition is defined
// outside the loop selects the condition c; the loop becomes
//   if %c { <the loop, every `if %c` replaced by its then-branch> }
//   else  { <the loop, every `if %c` replaced by its else-branch> }
// repeated while such a loop remains (each copy may be unswitched on another condition; a loop
// is unswitched at most 3 times, bounding the code to 8 copies). `if`s with results are left alone.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Unswitches the loops of every kernel's roles (see above).
void unswitch_loops(ir::Module& module);

}  // namespace tessel::transforms
