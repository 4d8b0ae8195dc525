// Warpgroups (4 consecutive warps, 128 threads: the unit that issues wgmma) and setmaxnreg, which
// moves registers between warpgroups of a warp-specialized kernel.
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

constexpr int kWarpgroupThreads = 128;

// Warpgroup index of the calling thread in a 1-D block, warp-uniform (shuffled from lane 0).
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xffffffffu, threadIdx.x / kWarpgroupThreads, 0);
}

// Warp index within the warpgroup (0..3), warp-uniform.
__device__ __forceinline__ int warp_index_in_warpgroup() {
  return __shfl_sync(0xffffffffu, (threadIdx.x / 32) % 4, 0);
}

// Thread index within the warpgroup (0..127).
__device__ __forceinline__ int thread_index_in_warpgroup() {
  return threadIdx.x % kWarpgroupThreads;
}

// setmaxnreg.inc.sync.aligned.u32 N (sm_90a): raises the calling warpgroup's per-thread register
// limit to N (24 ≤ N ≤ 256, N % 8 == 0), blocking until the CTA's pool has the registers. Every
// warp of the warpgroup executes it; the current limit must be ≤ N. It only takes effect when the
// kernel has a register cap at entry (__launch_bounds__(threads, 1) or -maxrregcount), and each
// role must be one branch of an if/else so that ptxas can budget it (else warning C7508).
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// setmaxnreg.dec.sync.aligned.u32 N: lowers the limit to N and returns the registers to the pool
// (the current limit must be ≥ N). Producers give registers away to the math warpgroups.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

}  // namespace device
}  // namespace tessel
