// LowerToTile: the end of the task compiler — the event IR, after copy elimination, vectorization
// and shared-memory allocation, written as a tile program through the C++ tile language
// (include/tessel/tile.h), so that every tile-IR pass (layout synthesis, warp specialization,
// pipelining, ...) applies to it exactly as to a hand-written tile program.
//
// The translation:
//  - the pfor over blocks is the block_grid; loop indices are the block indices;
//  - a `for` is a tile-IR `for` that carries the register tensors its body writes (the GEMM
//    accumulator); the mapping's pipeline depth is its `stages` pin;
//  - a piece of a global tensor is a masked `tile` (tile coordinates from the chain of blocks
//    partitions: a piece index times its block over the final block), so ragged edges read zeros
//    and drop writes, as the task interpreter does;
//  - a copy into shared memory is `copy ... : shared` (TMA on sm_90a); into registers a register
//    copy and a cast; a copy into a global piece casts to its element type and stores;
//  - a call of a leaf variant is its ops, in order (fill, copy, mma against the transposed B,
//    elementwise in f32, reduce_sum); an mma that vectorize spread over n warpgroups along rows
//    gets `tiling = [n, 1]` and the block `threads = 128 n`, as the mapping said;
//  - `warp_specialize` from the mapping is pinned on the block_grid.
// Tensors copied into shared memory get a divisibility fact on their last extent (rows of 16
// bytes: TMA's rule, as examples/kernels/gemm.tir states it). Errors: a tensor mapped to `none`
// that copy elimination could not remove, and what this lowering does not translate yet (a piece
// of a dynamic block at a non-zero index, a nested pfor over blocks).
#pragma once

#include "frontend/task/event_ir.h"
#include "tessel/tile.h"

namespace tessel::transforms {

TileKernel lower_to_tile(const task::events::Program& program);

}  // namespace tessel::transforms
