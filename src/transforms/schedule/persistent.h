// Persistent: a warp-specialized kernel's grid becomes one block per resident slot (one per SM
// for a block that holds most of an SM), each block looping over output tiles in the
// raster-blocks order.
//
// Why. A non-persistent GEMM launches one block per output tile; each block pays its prologue
// (barrier setup, the first loads of its ring: the pipeline fills from empty) and its epilogue with
// the tensor cores idle, and the last wave leaves SMs idle (3000x5000x704 has 24 x 20 = 480 tiles
// of 128x256: 3.6 waves on 132 SMs). In a persistent kernel the producer role runs ahead across
// tile boundaries — it loads tile t+1's first K blocks while the consumers finish tile t and write
// its epilogue — so the ring never drains, and every block starts once.
//
// What the pass does, on the level-1 IR of src/ir/async.h (after warp-specialize and
// pipeline-arefs, before lower-arefs), to every kernel with roles whose block_grid has one or two
// dimensions:
//   %bm, %bn = block_grid %tm, %tn {raster_group = G, ...}
// becomes
//   %tiles = mul %tm, %tn
//   %sms = sm_count                   (the blocks the device holds at once, from the occupancy
//                                      API at launch: the SM count for a GEMM block that holds
//                                      most of an SM's shared memory, a multiple of it for a small
//                                      block such as a W4A16 GEMV tile)
//   %blocks = min %tiles, %sms
//   %b = block_grid %blocks {...}     (1-D; raster_group dropped: the order is explicit below)
// and the body of every role is wrapped in
//   for %t = %b to %tiles step %blocks iter(%base = 0) {
//     %bm, %bn = <the raster order of tile %t, as index arithmetic>
//     <the role's ops, with every aref sequence number n replaced by %base + n>
//     yield %base + <sequence numbers per tile>
//   }
// The raster order is raster-blocks' (groups of G tile rows, down the columns, then the next
// group; G = 1 when the grid has no raster_group): with t = linear tile index, per_group = G * tn,
// first = (t / per_group) * G, rows = min(tm - first, G), bm = first + (t % per_group) % rows,
// bn = (t % per_group) / rows. Aref sequence numbers keep counting across tiles (async.h: each
// role uses 0, 1, 2, ... in order), so the ring's slots and phases continue where the previous
// tile left them: an aref's per-tile count is the trip count of the loop that holds its ops in
// the role (`for %k = 0 to %n step 1`), the same value in every role that uses the aref, or 1 for
// an aref whose ops stand in no loop of the role (warp-specialize's epilogue operands: one
// sequence number per tile). The tile loop carries one base per distinct count — `%seq_base`,
// and `%tile_seq` (the tiles this block has done) for count 1 — and each aref op's number n
// becomes its count's base + n.
//
// Clusters (a block_grid `cluster = [2, 1]` from cluster-blocks): the tiles are walked in units
// of clusters — a grid of cdiv(tm, 2) x tn cluster tiles, min(cluster tiles, max(1, SMs / 2))
// clusters of 2 blocks (`block_grid %blocks {cluster = [2]}`), cluster c = block / 2 taking
// cluster tiles c, c + clusters, ... in the raster order (groups of G / 2 cluster rows) — and
// each block takes the row `2 * cluster row + cluster_rank` of its cluster's pair (`[1, 2]`: the
// column). With an odd tm the last cluster row's second block has no tile: its loads read
// nothing but TMA's zero fill and its stores are clipped, and it still takes part in the
// cluster's protocol. The launch sizes `sm_count` for a cluster kernel by the clusters that fit at
// once (cuOccupancyMaxActiveClusters x 2), not the SMs: a cluster beyond them would run as a
// second wave.
//
// A grid of three dimensions (split-k's `%bm, %bn, %part = block_grid %tm, %tn, %parts`) walks
// tm * tn * parts units, the third dimension fastest: unit u is part u % parts of tile u / parts
// (the parts of one tile run at once on neighbouring blocks), the tiles in the raster order above.
//
// A role's trailing `copy_async_wait` ops (stage-stores' drain of TMA stores) stay after the loop.
//
// Pins: `persistent = 0` on the block_grid keeps the grid of one block per tile. Refused with a
// user error: block indices used outside the roles, ops of one aref in one role in loops of
// different trip counts or with a lower bound other than 0 and a step other than 1, grids of more
// than three dimensions, clusters along two dimensions or with a third grid dimension.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Makes every warp-specialized kernel of `module` persistent (see above).
void make_persistent(ir::Module& module);

}  // namespace tessel::transforms
