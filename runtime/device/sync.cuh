// Fences and named barriers: ordering between the generic proxy (ordinary loads and stores) and
// the async proxy (TMA, wgmma), and barriers over a subset of a CTA's warps.
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

// fence.proxy.async.shared::cta: orders this thread's earlier generic-proxy writes to shared
// memory (st.shared, stmatrix) before later async-proxy reads of it (a TMA store, a wgmma reading
// a descriptor). Every writing thread issues it, then a barrier, then the async reader.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// fence.proxy.async (all state spaces): the same ordering for global memory too.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async;" ::: "memory");
}

// bar.sync id, count (= barrier.sync.aligned): the calling warps wait until `count` threads
// (a multiple of 32) have arrived at named barrier `id` (0..15). Id 0 is __syncthreads; tessel
// follows CUTLASS and leaves 1..7 to library code, so kernels use ids from 8 up (see
// kNamedBarrierFirstUserId).
__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// bar.arrive id, count: signals named barrier `id` without waiting (the producer side of a
// one-way handoff; the consumer side calls named_barrier_sync with the same count).
__device__ __forceinline__ void named_barrier_arrive(unsigned id, unsigned count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

constexpr unsigned kNamedBarrierFirstUserId = 8;

// griddepcontrol.launch_dependents: the launch after this one (launched with programmatic stream
// serialization) may be scheduled once every block of this grid has issued this or exited.
__device__ __forceinline__ void launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// griddepcontrol.wait: waits until the grids this launch depends on have completed and their
// memory operations are visible to it; returns at once when the launch did not overlap them.
__device__ __forceinline__ void grid_dependency_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

}  // namespace device
}  // namespace tessel
