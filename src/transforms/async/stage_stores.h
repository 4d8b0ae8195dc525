// StageStores: a consumer role's store of a wgmma accumulator tile into global memory becomes a
// store staged through shared memory and sent by TMA, asynchronously.
//
// Why. The wgmma accumulator layout gives each thread pairs of adjacent columns: stored straight
// from registers, a warp's store instruction writes 8 rows x 16 bytes, half of each 32-byte
// sector, and the consumer's warps issue 64 such stores per tile while the tensor cores idle.
// Measured on the H100 (bench/results/2026-11-24-warp-specialization-h100.md), the persistent
// warp-specialized 128x256 GEMM ran at 0.61-0.68x cuBLAS at K = 704..1024 that way and at
// 0.89-0.92x with this staging: stmatrix writes a 128x64 part of the tile into a 128-byte-swizzled
// buffer in one instruction per 16x16 block, one thread hands the buffer to a TMA store, and
// nobody waits for the store until the buffer is written again (two buffers alternate), so the
// next tile's mainloop starts while the last stores drain.
//
// What the pass does, on the level-1 IR of src/ir/async.h (after warp-specialize, before
// pipeline-arefs: the buffers count against the ring's shared-memory budget), to every
//   copy %out, %C_tile            (in a role; %out a 16-bit register tensor [R, C] whose layout is
//                                  the layout of a wgmma mma's result in the kernel, so that its
//                                  16x16 blocks are stmatrix's fragments; %C_tile = tile %C, %i,
//                                  %j {shape = [R, C]} of a kernel argument, C a multiple of 64,
//                                  R <= 256)
// becomes, for each part c of C / 64 column parts,
//   %part_c = slice %out {offsets = [0, 64c], shape = [R, 64]}
//   copy_async_wait {pending = 1}      the store that last read buffer c % 2 is done reading it
//   role_sync                          ... and every thread of the role knows it
//   copy %part_c, %stage_{c%2} {atom = "stmatrix.x4.b16"}
//   fence_proxy_async                  the role's generic writes become visible to TMA
//   role_sync                          ... all of them, before one thread sends the buffer
//   %C_c = tile %C, %i, %j * (C/64) + c {masked, shape = [R, 64]}
//   copy_async %stage_{c%2}, %C_c {atom = "tma.store.2d.boxRx64.sw128"}
//   copy_async_commit
// with two buffers `%stage_0/1 = alloc : shared<T, Sw<3,3,3> o 0 o (R,64):(64,1)>[R,64]` at the
// top level. The buffers alternate over all the parts a role stores, in program order (c counts
// from the role's first staged part, so an LSTM cell's c' and h' of one part each use both
// buffers); when that count is odd, the role's first part waits with `pending = 0` instead (the
// group before it, the last part of the previous tile, read the same buffer). And
// `copy_async_wait {pending = 0}` at the end of the role (the block may not exit while a store
// still reads its shared memory). TMA clips the box at the tensor's bounds, which
// is what a masked tile's store does. A TMA store needs 16-byte row strides: unless the kernel's
// facts (or a static extent) make C's row length a multiple of 8 elements, each part is sent by
// TMA only under `if (rows % 8 == 0)` (the TMA store carries `optional`: the launch passes an empty
// descriptor for a tensor TMA cannot describe), and in the else branch the role's threads copy
// the buffer out themselves (`copy %stage, %C_c`, bounds-checked 2-byte stores; the next part's
// role_sync orders those reads before the buffer is written again). Only the send is guarded,
// so the register side (slice, stmatrix) is one piece of code.
// A register transpose of an accumulator (swapped operands: Cᵀ = B·Aᵀ stored into C) matches
// too when it is one part wide (64 columns: one consumer warpgroup's rows): its 16x16 blocks are
// transposed, so its part goes into the buffer by `stmatrix.x4.trans.b16`, which writes each 8x8
// matrix transposed (test/lit/transforms/stage_stores_transposed.tir). Wider transposed tiles
// (two warpgroups' rows side by side) are left alone: their parts would be held by one
// warpgroup each.
// By warpgroup. A role whose warpgroups each hold their own rows of the tile (a consumer of two
// warpgroups with the accumulator's 64-row halves) may write and send by warpgroup: the role_syncs,
// the TMA store (a box of the warpgroup's rows from its share of the buffer, sent by thread 0 of
// each warpgroup), its commit and the waits carry `by = warpgroup`, so no warpgroup waits for
// another at the store. That is the default where the role's warpgroups drift apart: a loop of
// the role works on wgmma results in registers between its wgmmas (attention's softmax; measured
// on the H100, bench/results/2026-11-27-stores-by-warpgroup-h100.md: 0.946 -> 0.964 of cuDNN at
// L = 1K, 0.998 -> 1.011 at 4K, causal 1.086 -> 1.122 at 1K). A GEMM's consumer warpgroups wait
// on the same ring slots in step and keep the role-wide form (measured that way) unless the grid
// pins `stores_by = warpgroup`; `stores_by = role` keeps the role-wide form everywhere. Not by
// warpgroup: stores under the row-alignment guard (the copy-out fallback reads every row of the
// buffer), tiles with a window, register transposes, roles of one warpgroup or one elected thread.
// Stores that do not match are left alone, and so is a store pinned `{staged = false}`: its
// registers go straight to global memory, and the two buffers' shared memory goes to the rings
// (attention with 176-key tiles stores its output once per tile and needs the bytes for two
// K and two V slots).
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Stages the matching register-to-global stores of every kernel's roles (see above).
void stage_stores(ir::Module& module);

}  // namespace tessel::transforms
