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
// before persistent) whose block_grid has two dimensions and is made persistent: for each grid
// dimension d it sums the bytes of the producer's TMA loads (`copy %tile, %buf {atom =
// "tma.load..."}`) whose tile address does not depend on the block index d (ir::depends_on) —
// the tiles that blocks adjacent along d share — and, where one sum is positive and every such
// tile can be split in two halves along its rows on a swizzle-repeat boundary (multicast-loads'
// split), sets `cluster = [2, 1]` (d = 0) or `[1, 2]` (d = 1) on the block_grid, the larger sum
// winning (d = 0 on a tie). persistent then walks the tiles cluster by cluster (the blocks of a
// cluster take adjacent tiles at once) and lower-arefs' protocol is extended to the cluster by
// multicast-loads. Nothing else changes here: a cluster without multicast is only a launch shape.
//
// Why 2 and one dimension. Two blocks already halve the shared operand's L2 reads; CUTLASS's and
// the reference GEMM's best H100 configurations use 2x1. A cluster of more blocks must all be
// resident at once (fewer fit when SMs are partly busy) and its slowest block paces the others;
// 2-D clusters (both operands multicast) are left for the autotuner of the GEMM-family issue.
//
// Pins: `cluster = [1, 1]` on the block_grid keeps blocks alone (the attribute is removed); any
// other pinned value is kept if it has one extent of 2 or more and the kernel is warp-specialized
// and persistent, and refused with a user error otherwise.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Groups the blocks of every eligible kernel of `module` into clusters (see above).
void cluster_blocks(ir::Module& module);

}  // namespace tessel::transforms
