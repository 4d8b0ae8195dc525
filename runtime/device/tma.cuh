// TMA (the tensor memory accelerator): bulk tensor copies between global memory, described by a
// TmaDescriptor built on the host, and shared memory.
//
// Loads complete on an mbarrier: the copy adds its bytes to the barrier's transaction count as
// they land, so the consumer's mbarrier_wait returns only after the whole box is in shared memory
// (no fence needed after the wait). The box is always counted in full: elements outside the
// tensor's bounds are filled (zeros, or NaN with the NAN_REQUEST_ZERO_FMA fill) and still count.
// Coordinates are signed 32-bit element indices, innermost dimension first, and may be negative or
// past the end. Destinations of swizzled boxes must sit on the swizzle's repeat boundary (1024 B
// for 128B swizzle) for the pattern to match the wgmma layouts. Stores read shared memory through
// the async proxy: every writing thread issues fence_proxy_async_shared(), then a barrier, then one
// thread issues the store, tma_store_commit_group(), and later tma_store_wait_read<N>() before the
// buffer is overwritten. Out-of-bounds parts of a stored box are not written.
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

// Generic address of a descriptor: PTX wants the address of the __grid_constant__ parameter.
__device__ __forceinline__ unsigned long long tma_descriptor_address(const TmaDescriptor* desc) {
  return reinterpret_cast<unsigned long long>(desc);
}

// prefetch.tensormap: pulls the descriptor into the TMA unit's cache. One thread, once, early.
__device__ __forceinline__ void tma_prefetch_descriptor(const TmaDescriptor* desc) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(tma_descriptor_address(desc)) : "memory");
}

// L2 cache policies for the `_hint` loads (the 64-bit createpolicy encodings CUTLASS uses).
constexpr unsigned long long kCacheEvictNormal = 0x1000000000000000ull;
constexpr unsigned long long kCacheEvictFirst = 0x12F0000000000000ull;
constexpr unsigned long long kCacheEvictLast = 0x14F0000000000000ull;

// cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes: loads the box at
// (c0) into `dst` (this CTA) and completes its bytes on `bar` (this CTA).
__device__ __forceinline__ void tma_load_1d(void* dst, const TmaDescriptor* desc,
                                            unsigned long long* bar, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3}], [%2];" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "r"(c0)
      : "memory");
}

// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes: loads the box at
// (c0, c1) into `dst` (this CTA) and completes its bytes on `bar` (this CTA).
__device__ __forceinline__ void tma_load_2d(void* dst, const TmaDescriptor* desc,
                                            unsigned long long* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}

// cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes: loads the box at
// (c0, c1, c2) into `dst` (this CTA) and completes its bytes on `bar` (this CTA).
__device__ __forceinline__ void tma_load_3d(void* dst, const TmaDescriptor* desc,
                                            unsigned long long* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes: loads the box at
// (c0, c1, c2, c3) into `dst` (this CTA) and completes its bytes on `bar` (this CTA).
__device__ __forceinline__ void tma_load_4d(void* dst, const TmaDescriptor* desc,
                                            unsigned long long* bar, int c0, int c1, int c2,
                                            int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes: loads the box at
// (c0, c1, c2, c3, c4) into `dst` (this CTA) and completes its bytes on `bar` (this CTA).
__device__ __forceinline__ void tma_load_5d(void* dst, const TmaDescriptor* desc,
                                            unsigned long long* bar, int c0, int c1, int c2, int c3,
                                            int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
      "r"(c4)
      : "memory");
}

// cp.async.bulk.prefetch.tensor.Nd.L2.global.tile: asks for the box at (c0, ...) in L2, as a
// load of the same descriptor would read it. No barrier, nothing to wait for: a hint.
__device__ __forceinline__ void tma_prefetch_1d(const TmaDescriptor* desc, int c0) {
  asm volatile("cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%0, {%1}];" ::"l"(
                   tma_descriptor_address(desc)),
               "r"(c0)
               : "memory");
}
__device__ __forceinline__ void tma_prefetch_2d(const TmaDescriptor* desc, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(
                   tma_descriptor_address(desc)),
               "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_prefetch_3d(const TmaDescriptor* desc, int c0, int c1,
                                                int c2) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(
                   tma_descriptor_address(desc)),
               "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_prefetch_4d(const TmaDescriptor* desc, int c0, int c1, int c2,
                                                int c3) {
  asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];" ::"l"(
                   tma_descriptor_address(desc)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void tma_prefetch_5d(const TmaDescriptor* desc, int c0, int c1, int c2,
                                                int c3, int c4) {
  asm volatile(
      "cp.async.bulk.prefetch.tensor.5d.L2.global.tile [%0, {%1, %2, %3, %4, %5}];" ::"l"(
          tma_descriptor_address(desc)),
      "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// As tma_load_1d, with an L2 cache policy (kCacheEvict*) for the global reads.
__device__ __forceinline__ void tma_load_1d_hint(void* dst, const TmaDescriptor* desc,
                                                 unsigned long long* bar,
                                                 unsigned long long cache_policy, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%4}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "l"(cache_policy), "r"(c0)
      : "memory");
}

// As tma_load_2d, with an L2 cache policy (kCacheEvict*) for the global reads.
__device__ __forceinline__ void tma_load_2d_hint(void* dst, const TmaDescriptor* desc,
                                                 unsigned long long* bar,
                                                 unsigned long long cache_policy, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%4, %5}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "l"(cache_policy), "r"(c0), "r"(c1)
      : "memory");
}

// As tma_load_3d, with an L2 cache policy (kCacheEvict*) for the global reads.
__device__ __forceinline__ void tma_load_3d_hint(void* dst, const TmaDescriptor* desc,
                                                 unsigned long long* bar,
                                                 unsigned long long cache_policy, int c0, int c1,
                                                 int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "l"(cache_policy), "r"(c0), "r"(c1),
      "r"(c2)
      : "memory");
}

// As tma_load_4d, with an L2 cache policy (kCacheEvict*) for the global reads.
__device__ __forceinline__ void tma_load_4d_hint(void* dst, const TmaDescriptor* desc,
                                                 unsigned long long* bar,
                                                 unsigned long long cache_policy, int c0, int c1,
                                                 int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%4, %5, %6, %7}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "l"(cache_policy), "r"(c0), "r"(c1),
      "r"(c2), "r"(c3)
      : "memory");
}

// As tma_load_5d, with an L2 cache policy (kCacheEvict*) for the global reads.
__device__ __forceinline__ void tma_load_5d_hint(void* dst, const TmaDescriptor* desc,
                                                 unsigned long long* bar,
                                                 unsigned long long cache_policy, int c0, int c1,
                                                 int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "l"(cache_policy), "r"(c0), "r"(c1),
      "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// cp.async.bulk.tensor.1d...multicast::cluster: loads one box and writes it, and completes its
// bytes, at the same CTA-relative offsets of `dst` and `bar` in every CTA whose bit is set in
// `cta_mask` (bit i = %cluster_ctarank i). Each destination's barrier must expect these bytes.
__device__ __forceinline__ void tma_load_1d_multicast(void* dst, const TmaDescriptor* desc,
                                                      unsigned long long* bar,
                                                      unsigned short cta_mask, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster"
      " [%0], [%1, {%4}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "h"(cta_mask), "r"(c0)
      : "memory");
}

// cp.async.bulk.tensor.2d...multicast::cluster: loads one box and writes it, and completes its
// bytes, at the same CTA-relative offsets of `dst` and `bar` in every CTA whose bit is set in
// `cta_mask` (bit i = %cluster_ctarank i). Each destination's barrier must expect these bytes.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TmaDescriptor* desc,
                                                      unsigned long long* bar,
                                                      unsigned short cta_mask, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster"
      " [%0], [%1, {%4, %5}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
}

// cp.async.bulk.tensor.3d...multicast::cluster: loads one box and writes it, and completes its
// bytes, at the same CTA-relative offsets of `dst` and `bar` in every CTA whose bit is set in
// `cta_mask` (bit i = %cluster_ctarank i). Each destination's barrier must expect these bytes.
__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const TmaDescriptor* desc,
                                                      unsigned long long* bar,
                                                      unsigned short cta_mask, int c0, int c1,
                                                      int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster"
      " [%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "h"(cta_mask), "r"(c0), "r"(c1),
      "r"(c2)
      : "memory");
}

// cp.async.bulk.tensor.4d...multicast::cluster: loads one box and writes it, and completes its
// bytes, at the same CTA-relative offsets of `dst` and `bar` in every CTA whose bit is set in
// `cta_mask` (bit i = %cluster_ctarank i). Each destination's barrier must expect these bytes.
__device__ __forceinline__ void tma_load_4d_multicast(void* dst, const TmaDescriptor* desc,
                                                      unsigned long long* bar,
                                                      unsigned short cta_mask, int c0, int c1,
                                                      int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster"
      " [%0], [%1, {%4, %5, %6, %7}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "h"(cta_mask), "r"(c0), "r"(c1),
      "r"(c2), "r"(c3)
      : "memory");
}

// cp.async.bulk.tensor.5d...multicast::cluster: loads one box and writes it, and completes its
// bytes, at the same CTA-relative offsets of `dst` and `bar` in every CTA whose bit is set in
// `cta_mask` (bit i = %cluster_ctarank i). Each destination's barrier must expect these bytes.
__device__ __forceinline__ void tma_load_5d_multicast(void* dst, const TmaDescriptor* desc,
                                                      unsigned long long* bar,
                                                      unsigned short cta_mask, int c0, int c1,
                                                      int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster"
      " [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;" ::"r"(smem_u32(dst)),
      "l"(tma_descriptor_address(desc)), "r"(smem_u32(bar)), "h"(cta_mask), "r"(c0), "r"(c1),
      "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// cp.async.bulk.tensor.1d.global.shared::cta.bulk_group: stores the box at `src` to
// (c0); joins the thread's current bulk group (commit it).
__device__ __forceinline__ void tma_store_1d(const TmaDescriptor* desc, const void* src, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group"
      " [%0, {%2}], [%1];" ::"l"(tma_descriptor_address(desc)),
      "r"(smem_u32(src)), "r"(c0)
      : "memory");
}

// cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: stores the box at `src` to
// (c0, c1); joins the thread's current bulk group (commit it).
__device__ __forceinline__ void tma_store_2d(const TmaDescriptor* desc, const void* src, int c0,
                                             int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
      " [%0, {%2, %3}], [%1];" ::"l"(tma_descriptor_address(desc)),
      "r"(smem_u32(src)), "r"(c0), "r"(c1)
      : "memory");
}

// cp.async.bulk.tensor.3d.global.shared::cta.bulk_group: stores the box at `src` to
// (c0, c1, c2); joins the thread's current bulk group (commit it).
__device__ __forceinline__ void tma_store_3d(const TmaDescriptor* desc, const void* src, int c0,
                                             int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"
      " [%0, {%2, %3, %4}], [%1];" ::"l"(tma_descriptor_address(desc)),
      "r"(smem_u32(src)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// cp.async.bulk.tensor.4d.global.shared::cta.bulk_group: stores the box at `src` to
// (c0, c1, c2, c3); joins the thread's current bulk group (commit it).
__device__ __forceinline__ void tma_store_4d(const TmaDescriptor* desc, const void* src, int c0,
                                             int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group"
      " [%0, {%2, %3, %4, %5}], [%1];" ::"l"(tma_descriptor_address(desc)),
      "r"(smem_u32(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// cp.async.bulk.tensor.5d.global.shared::cta.bulk_group: stores the box at `src` to
// (c0, c1, c2, c3, c4); joins the thread's current bulk group (commit it).
__device__ __forceinline__ void tma_store_5d(const TmaDescriptor* desc, const void* src, int c0,
                                             int c1, int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group"
      " [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(tma_descriptor_address(desc)),
      "r"(smem_u32(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// cp.async.bulk.commit_group: closes this thread's pending bulk stores into one group.
__device__ __forceinline__ void tma_store_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// cp.async.bulk.wait_group.read N: waits until at most N of this thread's committed bulk groups
// still have to READ their shared-memory source; after it the source buffers of the older groups
// may be overwritten (their global writes may still be in flight).
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// cp.async.bulk.wait_group N: waits until at most N groups are pending in full (global writes
// performed), e.g. before the kernel hands the output to a dependent reader in the same grid.
template <int N>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace device
}  // namespace tessel
