// Thread-block clusters (sm_90): CTA ranks, the cluster-wide barrier, and distributed shared
// memory (DSMEM) — reading and writing a peer CTA's shared memory through mapa addresses.
//
// A kernel launched with cluster dimensions (cuLaunchKernelEx) runs its CTAs in groups that are
// co-scheduled on one GPC. A CTA must not exit while a peer may still access its shared memory
// (remote stores, remote mbarrier arrives, multicast TMA into it): end with cluster_sync().
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

// %cluster_ctarank: this CTA's rank in its cluster (0 .. cluster_size()-1).
__device__ __forceinline__ unsigned cluster_cta_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// %cluster_nctarank: number of CTAs in the cluster.
__device__ __forceinline__ unsigned cluster_size() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}

// %cluster_ctaid.{x,y,z}: this CTA's coordinates inside the cluster.
__device__ __forceinline__ dim3 cluster_cta_index() {
  unsigned x, y, z;
  asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(x));
  asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(z));
  return dim3(x, y, z);
}

// %clusterid.{x,y,z}: the cluster's coordinates in the grid of clusters.
__device__ __forceinline__ dim3 cluster_index() {
  unsigned x, y, z;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(x));
  asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%clusterid.z;" : "=r"(z));
  return dim3(x, y, z);
}

// barrier.cluster.arrive.release.aligned: signals the cluster barrier; release orders this
// thread's earlier memory accesses (shared::cluster included) before the peers' wait returns.
// Every thread of every CTA in the cluster arrives once per phase.
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

// barrier.cluster.arrive.relaxed.aligned: the same signal without ordering (for a pure rendezvous).
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// barrier.cluster.wait.acquire.aligned: waits until every thread of the cluster has arrived.
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Arrive then wait: a full cluster-wide barrier.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// mapa.shared::cluster.u32: the shared::cluster address of the object at the same CTA-relative
// offset as `local` (a shared::cta address from smem_u32) in the CTA of rank `cta_rank`.
__device__ __forceinline__ unsigned cluster_map_shared(unsigned local, unsigned cta_rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(cta_rank));
  return remote;
}

// st.shared::cluster.u32 / ld.shared::cluster.u32 at a mapa address (a peer's shared memory).
// Visibility to the peer needs a cluster barrier (or an mbarrier release/acquire) in between.
__device__ __forceinline__ void st_shared_cluster(unsigned cluster_address, unsigned value) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(cluster_address), "r"(value) : "memory");
}
__device__ __forceinline__ unsigned ld_shared_cluster(unsigned cluster_address) {
  unsigned value;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(value) : "r"(cluster_address) : "memory");
  return value;
}

}  // namespace device
}  // namespace tessel
