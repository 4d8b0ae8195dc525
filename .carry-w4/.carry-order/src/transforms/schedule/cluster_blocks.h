// ClusterBlocks: pairs the blocks of a warp-specialized GEMM-like kernel into thread-block
// clusters whose blocks share an operand tile, so that each tile is read from L2 once per cluster
// instead of once per block (the multicast itself is multicast-loads', after lower-arefs).
//
// Why. A 128x256x64 stage of the generated GEMM moves 48 KB from L2 into an SM for 4.2 MFLOP;
// at the tensor cores' rate over 132 SMs that is about the L2's bandwidth, and the H100 GEMM
// stays a few percent below cuBLAS at 4096^3 for that reason alone (bench/results/
// 2026-11-24-warp-specialization-h100.md: tensor pipe 76% busy against the reference GEMM's 95%
// with a 2x1 cluster). Two blocks of tiles (m, n) and (m + 1, n) read the same B tile: in a
// cluster, each loads half of it and multicasts it into both, so each block loads 16 + 16 KB
// per stage instead of 16 + 32 KB.
//
// What the pass does, to every kernel with roles (after warp-specialize and pipeline-arefs,
// before persistent) whose block_grid has two dimensions, is made persistent and pins `cluster
// = [2, 1]` (or `[1, 2]`, or `auto`): for each grid dimension d it sums the bytes of the
// producer's TMA loads (`copy %tile, %buf {atom = "tma.load..."}`) whose tile address does not
// depend on the block index d (ir::depends_on) — the tiles that blocks adjacent along d share.
// Only tiles that split in two halves along their rows on a swizzle-repeat boundary count
// (multicast-loads' split; others, such as a 1-D bias row, each block keeps loading itself).
// With `auto`, where one sum is positive, it sets `cluster = [2, 1]` (d = 0) or `[1, 2]` (d = 1),
// the larger sum winning (d = 0 on a tie); a pinned [2, 1] or [1, 2] needs its sum positive. persistent then walks the tiles cluster by cluster (the blocks of a
// cluster take adjacent tiles at once) and multicast-loads extends lower-arefs' protocol to the
// cluster. Nothing else changes here: a cluster without multicast is only a launch shape.
//
// Why not by default. Measured on the H100 (bench/results/2026-11-25-clusters-h100.md, the
// default pipeline with and without `cluster = [2, 1]`, same process): 2x1 clusters with B
// multicast lose 0.2-2.6 points of cuBLAS's speed at the shapes (4096^3 0.981 against
// 0.994; 3000x5000x704 0.948 against 0.974) — the two blocks of a cluster wait for each other's
// releases, and the epilogue, not L2, now bounds those shapes — and gain 27 points where rows
// are not 128-byte aligned (8192x8192x1000: 0.880 against 0.610), where halving B's L2 reads
// pays. A compile-time rule cannot tell those apart (K is a run-time size); the autotuner of the
// GEMM-family issue will, by measuring. Until then a person pins it.
//
// Why 2 and one dimension. Two blocks already halve the shared operand's L2 reads; CUTLASS's and
// the reference GEMM's best H100 configurations use 2x1. A cluster of more blocks must all be
// resident at once (fewer fit when SMs are partly busy) and its slowest block paces the others;
// 2-D clusters (both operands multicast) are left for the autotuner.
//
// Pins: `cluster = [1, 1]` (or no attribute) keeps blocks alone (the attribute is removed);
// `cluster = auto` lets the pass pick the dimension as above (blocks stay alone when nothing is
// shared); `[2, 1]` / `[1, 2]` are kept if that dimension shares a splittable load. Anything else,
// or a cluster on a kernel that is not warp-specialized and persistent with a 2-D grid, is a user
// error naming the block_grid.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Groups the blocks of every eligible kernel of `module` into clusters (see above).
void cluster_blocks(ir::Module& module);

}  // namespace tessel::transforms
