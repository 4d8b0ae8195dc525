// cp.async: the pre-Hopper asynchronous global→shared copy of 4, 8 or 16 bytes per thread
// (sm_80+), tracked per thread in commit groups. Still the path for gathers that TMA cannot
// describe.
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

// cp.async.ca.shared.global [dst], [src], Bytes (Bytes = 4, 8 or 16; cached in L1). Both
// addresses aligned to Bytes.
template <int Bytes>
__device__ __forceinline__ void cp_async_ca(void* dst, const void* src) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(smem_u32(dst)), "l"(src),
               "n"(Bytes)
               : "memory");
}

// cp.async.cg.shared.global [dst], [src], 16 (L2 only; 16 bytes is the only size .cg takes).
__device__ __forceinline__ void cp_async_cg16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst)), "l"(src)
               : "memory");
}

// cp.async.cg with src-size: copies `src_bytes` (0..16) and zero-fills the rest of the 16 bytes,
// the usual way to predicate an edge element off (src_bytes = 0 reads nothing).
__device__ __forceinline__ void cp_async_cg16_zfill(void* dst, const void* src,
                                                    unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_u32(dst)), "l"(src),
               "r"(src_bytes)
               : "memory");
}

// cp.async.commit_group: closes this thread's pending cp.asyncs into a group.
__device__ __forceinline__ void cp_async_commit_group() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// cp.async.wait_group N: waits until at most N of this thread's groups are pending. Other
// threads' copies need a barrier after the wait before they are visible.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// cp.async.wait_all: waits for all of this thread's cp.asyncs.
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

}  // namespace device
}  // namespace tessel
