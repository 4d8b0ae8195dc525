// wgmma: Hopper's warpgroup-wide asynchronous matrix multiply-accumulate, its synchronization, and
// the shared-memory matrix descriptor its operands are read through.
//
// One wgmma computes D(64×N, f32 in registers) = A(64×K)·B(K×N) + scale_d·D, issued together by
// the 128 threads of one warpgroup (all threads execute the same instruction with identical
// descriptors). K is 16 for f16/bf16 and 32 for fp8. B always comes from shared memory through a
// descriptor; A comes from shared memory (SS form) or from four 32-bit registers per thread (RS).
// Execution is asynchronous: the sequence is
//   wgmma_fence();            // orders earlier register/shared accesses before the wgmmas
//   wgmma_ss<...>(...) × k;   // any number, same or different accumulators
//   wgmma_commit_group();     // closes them into one group
//   wgmma_wait_group<N>();    // blocks until at most N groups are pending
// and the accumulator registers may be read or written by ordinary code only after the wait that
// covers their group. Wrap the accumulators in wgmma_fence_operand() before and after each batch
// so the compiler does not move register traffic into the asynchronous window (CUTLASS
// warpgroup_fence_operand). Shared memory written with ordinary stores must be published with
// fence_proxy_async_shared() and a barrier before a wgmma reads it; TMA-written data needs only
// the mbarrier wait.
//
// Accumulator layout (m64nN, f32), for thread t of the warpgroup, warp w = t/32, lane l = t%32:
// register i holds row 16w + l/4 + 8·((i>>1)&1), column 8·(i/4) + 2·(l%4) + (i&1). The RS A
// fragment for 16-bit types (64×16 per wgmma) uses the same formula with 16 columns over the eight
// halves of a[0..3], so a pairwise-converted accumulator is an A fragment.
#pragma once

#include "common.cuh"
#include "wgmma_ops.cuh"

namespace tessel {
namespace device {

// wgmma.fence.sync.aligned: every warp of the warpgroup issues it before the first wgmma of a
// batch, and again whenever ordinary code touched the accumulator or A-fragment registers since
// the last wgmma on them.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

// wgmma.commit_group.sync.aligned: closes all uncommitted wgmmas of the warpgroup into one group.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// wgmma.wait_group.sync.aligned N: waits until at most N committed groups are still pending
// (0 ≤ N ≤ 7). After it, the accumulators and shared operands of the older groups are free.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Compiler-only fence on register operands: an empty asm that reads and writes each register, so
// no load/store of them moves across it. Costs no instruction.
template <int R>
__device__ __forceinline__ void wgmma_fence_operand(float (&registers)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(registers[i])::"memory");
}
template <int R>
__device__ __forceinline__ void wgmma_fence_operand(unsigned (&registers)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(registers[i])::"memory");
}

// Row and column (within the 64×N tile) of accumulator register i of warpgroup thread t.
__device__ __forceinline__ int wgmma_accumulator_row(int t, int i) {
  return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1);
}
__device__ __forceinline__ int wgmma_accumulator_column(int t, int i) {
  return 8 * (i / 4) + 2 * (t % 4) + (i & 1);
}

// ---------------------------------------------------------------------------------------------
// The shared-memory matrix descriptor (64 bits; PTX "matrix-descriptor-format"):
//   bits 0-13  start address >> 4          bits 16-29 leading byte offset (LBO) >> 4
//   bits 32-45 stride byte offset (SBO) >> 4   bits 49-51 base offset   bits 62-63 swizzle
// Everything 16-byte aligned. What LBO and SBO mean depends on the major-ness and swizzle:
//   K-major, 128B/64B/32B swizzle: the tile is a column of atoms of 8 rows × (128/64/32) bytes;
//     SBO = distance between 8-row groups along M/N (1024/512/256 when dense); LBO is ignored.
//     Step along K inside the atom by adding the byte offset to the start address (k16 of 16-bit
//     data = +32 B); keep base offset 0 when each atom starts on its repeat boundary.
//   K-major, no swizzle: core matrices of 8 rows × 16 B (128 B contiguous);
//     SBO = distance between core matrices along M/N, LBO = distance between the two core
//     matrices along K.
//   MN-major, 128B/64B/32B swizzle: atoms of (128/64/32 B along M/N) × 8 K-rows;
//     SBO = distance between 8-K-row groups, LBO = distance between atoms along M/N.
//   MN-major, no swizzle: SBO = distance between core matrices along M/N, LBO = along K.
// MN-major operands are legal only for 16-bit types read through a descriptor (trans = 1).
// ---------------------------------------------------------------------------------------------

// Swizzle mode as the descriptor encodes it (the TMA swizzle of the same width writes exactly
// this pattern when the box's inner extent equals the width).
enum class SmemSwizzle : unsigned { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// Bytes of one swizzle row (the atom's inner extent): 128/64/32, and 16 for no swizzle (a core
// matrix row).
__device__ __forceinline__ unsigned smem_swizzle_bytes(SmemSwizzle swizzle) {
  return swizzle == SmemSwizzle::b128  ? 128u
         : swizzle == SmemSwizzle::b64 ? 64u
         : swizzle == SmemSwizzle::b32 ? 32u
                                       : 16u;
}

// Builds a descriptor from a shared-memory byte address (smem_u32), LBO and SBO in bytes.
__device__ __forceinline__ unsigned long long make_smem_descriptor(unsigned smem_address,
                                                                   unsigned leading_byte_offset,
                                                                   unsigned stride_byte_offset,
                                                                   SmemSwizzle swizzle,
                                                                   unsigned base_offset = 0) {
  unsigned long long desc = 0;
  desc |= static_cast<unsigned long long>((smem_address & 0x3FFFF) >> 4);
  desc |= static_cast<unsigned long long>((leading_byte_offset >> 4) & 0x3FFF) << 16;
  desc |= static_cast<unsigned long long>((stride_byte_offset >> 4) & 0x3FFF) << 32;
  desc |= static_cast<unsigned long long>(base_offset & 7) << 49;
  desc |= static_cast<unsigned long long>(static_cast<unsigned>(swizzle)) << 62;
  return desc;
}

// The descriptor of a K-major operand as TMA lays it down with a swizzled box whose inner extent
// is the swizzle width: rows of `smem_swizzle_bytes` bytes, 8-row atoms stacked densely.
__device__ __forceinline__ unsigned long long make_smem_descriptor_k_major(unsigned smem_address,
                                                                           SmemSwizzle swizzle) {
  return make_smem_descriptor(smem_address, 16, 8 * smem_swizzle_bytes(swizzle), swizzle);
}

// Adds a byte offset to a descriptor's start address (e.g. +32 B per k16 step inside a K-major
// 128B-swizzled atom). The offset must keep the address inside the 18-bit window.
__device__ __forceinline__ unsigned long long smem_descriptor_advance(unsigned long long desc,
                                                                      unsigned bytes) {
  return desc + static_cast<unsigned long long>(bytes >> 4);
}

// A descriptor held as its two 32-bit words, for the k steps of one wgmma group: `desc + units`
// moves the start address (bits 0-13 of the low word) by `units` 16-byte units and leaves the high
// word alone. A shared address and its k offsets stay below 256 KiB, so the field never carries
// into LBO or the high word, and the sum needs one 32-bit add where a 64-bit `+` costs a carry
// chain and register-pair moves before each wgmma's R2UR (measured: ~6 instructions per wgmma
// in the W4A16 consumer's loop, a fifth of it).
struct SmemDescriptor {
  unsigned lo, hi;
  __device__ __forceinline__ SmemDescriptor(unsigned long long desc)
      : lo(static_cast<unsigned>(desc)), hi(static_cast<unsigned>(desc >> 32)) {}
  __device__ __forceinline__ SmemDescriptor(unsigned low, unsigned high) : lo(low), hi(high) {}
  __device__ __forceinline__ SmemDescriptor operator+(int units) const {
    return SmemDescriptor(lo + static_cast<unsigned>(units), hi);
  }
  // Packed by a mov the compiler cannot see through: from (hi << 32) | (lo + units) NVVM proves
  // that no carry can happen and folds it back into a 64-bit add.
  __device__ __forceinline__ operator unsigned long long() const {
    unsigned long long desc;
    asm("mov.b64 %0, {%1, %2};" : "=l"(desc) : "r"(lo), "r"(hi));
    return desc;
  }
};

// ---------------------------------------------------------------------------------------------
// The instructions. N is any multiple of 8 from 8 to 256; `d` holds the N/2 f32 accumulators of
// this thread; scale_d == 0 makes the instruction overwrite D (D = A·B) instead of accumulating.
// ---------------------------------------------------------------------------------------------

enum class MmaType { f16, bf16, e4m3, e5m2 };

// SS form, 16-bit types: wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16|bf16}.{f16|bf16}
// d, a-desc, b-desc, scale-d, 1, 1, TransA, TransB. TransA/TransB = 0 for K-major, 1 for
// M-/N-major.
template <int N, MmaType T, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], unsigned long long desc_a,
                                         unsigned long long desc_b, int scale_d = 1) {
  static_assert(T == MmaType::f16 || T == MmaType::bf16, "wgmma_ss takes f16 or bf16");
  if constexpr (T == MmaType::f16) {
    detail::WgmmaOps<N>::template ss_f16<TransA, TransB>(d, desc_a, desc_b, scale_d);
  } else {
    detail::WgmmaOps<N>::template ss_bf16<TransA, TransB>(d, desc_a, desc_b, scale_d);
  }
}

// RS form, 16-bit types: A (64×16, K-major, there is no trans-a) in four b32 registers per
// thread laid out as the accumulator formula with 16 columns; B through its descriptor.
template <int N, MmaType T, int TransB = 0>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const unsigned (&a)[4],
                                         unsigned long long desc_b, int scale_d = 1) {
  static_assert(T == MmaType::f16 || T == MmaType::bf16, "wgmma_rs takes f16 or bf16");
  if constexpr (T == MmaType::f16) {
    detail::WgmmaOps<N>::template rs_f16<TransB>(d, a, desc_b, scale_d);
  } else {
    detail::WgmmaOps<N>::template rs_bf16<TransB>(d, a, desc_b, scale_d);
  }
}

// SS form, fp8: wgmma.mma_async.sync.aligned.m64nNk32.f32.{A}.{B} d, a-desc, b-desc, scale-d,
// 1, 1. Both operands K-major (fp8 has no transpose); each descriptor row is 32 fp8 values wide
// per k32 step.
template <int N, MmaType TA, MmaType TB>
__device__ __forceinline__ void wgmma_ss_fp8(float (&d)[N / 2], unsigned long long desc_a,
                                             unsigned long long desc_b, int scale_d = 1) {
  static_assert(
      (TA == MmaType::e4m3 || TA == MmaType::e5m2) && (TB == MmaType::e4m3 || TB == MmaType::e5m2),
      "wgmma_ss_fp8 takes e4m3 or e5m2 operands");
  if constexpr (TA == MmaType::e4m3 && TB == MmaType::e4m3) {
    detail::WgmmaOps<N>::ss_e4m3_e4m3(d, desc_a, desc_b, scale_d);
  } else if constexpr (TA == MmaType::e4m3 && TB == MmaType::e5m2) {
    detail::WgmmaOps<N>::ss_e4m3_e5m2(d, desc_a, desc_b, scale_d);
  } else if constexpr (TA == MmaType::e5m2 && TB == MmaType::e4m3) {
    detail::WgmmaOps<N>::ss_e5m2_e4m3(d, desc_a, desc_b, scale_d);
  } else {
    detail::WgmmaOps<N>::ss_e5m2_e5m2(d, desc_a, desc_b, scale_d);
  }
}

}  // namespace device
}  // namespace tessel
