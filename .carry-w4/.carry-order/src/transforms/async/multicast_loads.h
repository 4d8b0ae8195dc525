// MulticastLoads: in a kernel of thread-block clusters (cluster-blocks, persistent), the TMA loads
// of tiles that every block of a cluster reads become multicasts — each block loads a 1/C share
// of the tile's rows and writes it into all C blocks' ring slots — and the ring's barriers grow
// to the cluster (level 2 of src/ir/async.h to level 2; after lower-arefs, before check-protocol).
//
// Which loads. A `copy_async %tile, %buf, %full, %s {atom = "tma.load.2d.boxRxC..."}` whose tile
// address does not depend on the block's `cluster_rank` (ir::depends_on: after persistent, the
// block index along the cluster's dimension is `tile * C + cluster_rank`, so B's tile in a 2x1
// cluster qualifies and A's does not), whose buffer is an aref slot's (`aref_slot`: the same
// shared offset in every block) and splits into C parts of R / C rows on swizzle-repeat
// boundaries. It becomes
//   copy_async %tile, %buf, %full, %s {atom = "tma.load.2d.box(R/C)xC...", multicast}
// which the emitter issues as one TMA load of rows [r R / C, (r + 1) R / C) of the tile, r =
// the block's rank, into the same rows of %buf in every block of the cluster, completing its
// bytes on each block's %full[%s]. Each block still expects the whole slot's bytes on its own
// full barrier (its share and its peers' arrive there), so expect_tx is unchanged; a peer's
// bytes may land before this block's expect_tx, which the barrier allows (its phase cannot
// complete while the expect_tx arrival is pending).
//
// The protocol. A producer may overwrite a slot only when every block whose buffer its multicast
// writes has released it, so for each ring with a multicast load:
//   - the empty barrier the producer waits on before taking the slot (the mbarrier_wait just
//     before `aref_slot`, as lower-arefs writes it) expects C times the arrivals: each consumer
//     warpgroup of each block of the cluster;
//   - each `mbarrier_arrive %empty, %s` (the consumers' releases) gets `cluster`: one arrival on
//     %empty[%s] of every block of the cluster;
//   - the `block_sync` that publishes the initialized barriers becomes a `cluster_sync` (a peer
//     may multicast into, or arrive on, this block's barriers as soon as it starts), and a
//     `cluster_sync` ends the kernel (no block exits while a peer may still arrive on its
//     barriers or write its slots).
// Kernels without a `cluster` on their block_grid, without `cluster_rank` or without a load that
// qualifies are left unchanged (a cluster without multicast is only a launch shape).
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Turns the cluster-shared TMA loads of every kernel of `module` into multicasts (see above).
void multicast_loads(ir::Module& module);

// Whether a shared buffer of type `t` splits into `parts` shares of whole rows, each starting on a
// swizzle-repeat boundary (what TMA and wgmma need of a buffer's start): a row-major layout
// "[Sw<B,M,S> o 0 o ](R,C):(C,1)", or one of row-major column blocks "(R,(Cb,J)):(Cb,(1,R*Cb))"
// (an MN-major wgmma operand: one TMA box per block), whose R / parts rows of a block are a
// multiple of the repeat's bytes.
bool splits_into_row_shares(const ir::Type& t, int64_t parts);

}  // namespace tessel::transforms
