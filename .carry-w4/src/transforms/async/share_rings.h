// ShareRings: the rings of two mainloops that run one after the other in the same roles become
// one ring with the slots of both.
//
// Why. A kernel that accumulates over two operand pairs in a row — an LSTM cell's input GEMM
// x W_x^T and then its recurrent GEMM h W_h^T into the same gate accumulators — has two mainloops,
// and warp-specialize gives each its own aref. pipeline-arefs splits the shared-memory budget
// between them: two rings of 2 slots of 48 KiB each for 128x256x64 tiles, where one mainloop gets
// 4. Only one ring is busy at a time, except at the switch, and a ring of 2 slots keeps one K
// block in flight behind the one being read, which is not enough to cover TMA's latency (measured
// on the H100: 447 TFLOP/s for the LSTM cell at 4096 x 8192 x 8192 where the GEMM runs at ~650).
// One ring of 4 slots carries both loops' K blocks: the producer runs into the second loop's
// blocks while the consumer still reads the first's, exactly as across tiles.
//
// What the pass does, on the level-1 IR of src/ir/async.h after pipeline-arefs and persistent
// (the slots are decided and sequence numbers are `%base + n` with one base per count, or plain n
// in a kernel that is not persistent), before lower-arefs: for two arefs %A and %B of the same
// type whose ops, in every role that uses either, all stand in one block (the role's body or its
// tile loop), %A's before %B's, %A's acquires or waits in a loop `for %k = 0 to %nA step 1`:
//   %A's numbers x  become  x + %baseB          (the base of %B's numbers; none: unchanged)
//   %B's numbers y  become  y + %baseA + %nA    (%B's blocks follow %A's in the tile's sequence)
// With bases t*nA and t*nB after t tiles, tile t's numbers are t*(nA + nB) + [0, nA) for the first
// loop and t*(nA + nB) + nA + [0, nB) for the second: one sequence 0, 1, 2, ... per role, as an
// aref's must be (async.h). %A gets the slots of both, %B is gone. check-protocol verifies the
// result. Arefs used outside loops (warp-specialize's epilogue operands) are left alone, and so is
// a pair whose ops a role holds in more than one loop each (unswitch-loops' two copies of a tile
// loop, for an output whose rows TMA may not store): those keep their two rings (not yet done).
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Merges the rings of consecutive mainloops of every kernel (see above).
void share_rings(ir::Module& module);

}  // namespace tessel::transforms
