// RasterBlocks: the order in which a kernel's blocks are handed out, chosen for L2 reuse.
//
// A block grid is a set: nothing in a tile program can observe which block runs first, so the
// mapping from the hardware's block index to the program's block coordinates is tessel's choice.
// It matters for kernels that stream operand tiles from global memory (a *mainloop*: a `for`
// whose body copies global tiles into shared memory, e.g. a GEMM's K loop). With the natural
// order (dimension 0 fastest) the ~132 blocks resident at once on an H100 cover many row tiles and
// few column tiles of the output, so every resident block reads its own row panel of A and the
// combined working set overflows L2. Taking blocks in groups of G along dimension 0 (Triton's
// GROUP_M: G row tiles, then down the columns, then the next G rows) makes the resident wave a
// compact G x (132 / G) patch whose A and B panels are each read by many blocks while they are in
// L2. Measured on the H100 (bench/results/2026-11-22-gemm-h100.md, examples/kernels/gemm.tir,
// 128x256 tiles): G = 8 is 4-8% faster than the natural order at 8192^3 and 8192x8192x4096;
// G = 16 is no better than 8.
//
// The pass writes `raster_group = 8` on the 2-D block_grid of every kernel with a mainloop,
// unless the writer pinned a `raster_group` there (kept; it must be an integer >= 1, else a user
// error naming the op); 1-D and 3-D grids and kernels without a mainloop are left alone. The
// emitter (src/target/cuda/emit_mainloop.cpp) turns the attribute into the index arithmetic.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// The group size the pass chooses.
constexpr int64_t kRasterGroup = 8;

// Sets `raster_group` on the block grids of `module`'s kernels that have a mainloop.
void raster_blocks(ir::Module& module);

}  // namespace tessel::transforms
