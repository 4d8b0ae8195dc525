// SynthesizeSharedLayouts: a layout (and swizzle) for every shared tensor, from the accesses of
// the ops that write and read it, and an atom for every copy that touches shared memory.
//
// Runs after synthesize-layouts (it needs the register fragments). For each shared tile (the
// result of a copy from global memory, or an alloc in shared memory), it gathers the accesses:
// the copy that fills it (TMA on sm_90a when wgmma reads the tile, else cp.async or ld/st with the
// widest vector the global extents' facts allow, coalesced over the block's threads), and the
// reads — wgmma through a descriptor, or an mma.sync fragment / a copy into registers, matched
// against ldmatrix (x4, x2, x1, plain or transposed, by evaluating which lanes hold which
// elements) or else vector loads. Every combination of instruction choices is tried; each is
// unified into one layout and swizzled (shared_layout.h), and the cheapest by the latency model
// (instructions x issue cycles x bank-conflict degree) wins. The tensor's type and the types of
// its transposed views get the layout; each copy gets `atom`; each shared access gets `banks`
// (its wavefronts under the bank model), which `tessel opt --report=banks` lists.
#pragma once

#include "ir/ir.h"
#include "target/cuda/target.h"

namespace tessel::transforms {

void synthesize_shared_layouts(ir::Module& module,
                               const target::cuda::Target& target = target::cuda::Target::sm90a());

}  // namespace tessel::transforms
