// mma.sync m16n8k16 (sm_80+): the warp-wide tensor-core multiply-add that the sm_80 GEMM path
// issues, f32 accumulation of f16 or bf16 operands, plus the small helpers that path needs
// (16-bit packing of fragments, zero-filling 4/8-byte cp.async, the swizzle of shared offsets).
//
// Fragment contract (PTX ISA "Matrix Fragments for mma.m16n8k16", HOPPER.md §7), with lane l,
// g = l / 4 and q = l % 4:
//   A (16x16, row): 32-bit register r holds halves 2r (low) and 2r+1 (high); half i is element
//     (row g + 8*((i>>1)&1), col 2q + (i&1) + 8*(i>>2)).
//   B (16x8, col, i.e. stored as N x K): register r holds halves 2r and 2r+1; half i is element
//     (k 2q + (i&1) + 8*(i>>1), n g).
//   C / D (16x8 f32): float i is element (row g + 8*(i>>1), col 2q + (i&1)).
// All 32 lanes of the warp execute the instruction with the same (uniform) control flow.
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

// d = a * b + d for a 16x16 f16 A, a 16x8 f16 B and a 16x8 f32 accumulator, in place:
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {d0..d3}, {a0..a3}, {b0,b1}, {d0..d3}.
__device__ __forceinline__ void mma_m16n8k16_f32_f16(float& d0, float& d1, float& d2, float& d3,
                                                     unsigned a0, unsigned a1, unsigned a2,
                                                     unsigned a3, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The same for bf16 operands:
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d0..d3}, {a0..a3}, {b0,b1}, {d0..d3}.
__device__ __forceinline__ void mma_m16n8k16_f32_bf16(float& d0, float& d1, float& d2, float& d3,
                                                      unsigned a0, unsigned a1, unsigned a2,
                                                      unsigned a3, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Two 16-bit patterns as one 32-bit fragment register: `lo` in bits 0-15 (the lower-indexed
// half of the contract above), `hi` in bits 16-31.
__device__ __forceinline__ unsigned pack_b16x2(unsigned short lo, unsigned short hi) {
  return static_cast<unsigned>(lo) | (static_cast<unsigned>(hi) << 16);
}

// Half h (0 = low, 1 = high) of a 32-bit fragment register.
__device__ __forceinline__ unsigned short half_b16(unsigned r, int h) {
  return static_cast<unsigned short>(h ? r >> 16 : r & 0xffffu);
}

// ld.shared.b16: one 16-bit element of a shared tile (the per-element operand path, when no
// ldmatrix form delivers a fragment). `p` is a generic pointer into shared memory.
__device__ __forceinline__ unsigned short ld_shared_b16(const void* p) {
  return *static_cast<const unsigned short*>(p);
}

// cp.async.ca.shared.global [dst], [src], Bytes, src_bytes (Bytes = 4 or 8, cached in L1):
// copies `src_bytes` (0..Bytes) and zero-fills the rest, so that an out-of-bounds run reads
// nothing. The 8- and 4-byte runs of the sm_80 path's copies when the facts prove only 8- or
// 4-byte aligned rows (cp_async.cuh has the 16-byte .cg form).
template <int Bytes>
__device__ __forceinline__ void cp_async_ca_zfill(void* dst, const void* src, unsigned src_bytes) {
  static_assert(Bytes == 4 || Bytes == 8, "cp.async.ca with src-size: 4 or 8 bytes here");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(smem_u32(dst)), "l"(src),
               "n"(Bytes), "r"(src_bytes)
               : "memory");
}

// CuTe's Sw<B,M,S> on an element offset (layout/swizzle.h): x ^ ((x & yyy) >> S), where yyy
// holds bits [M+S, M+S+B) (S > 0; a negative S shifts left from bits [M, M+B)). The sm_80 path
// addresses swizzled shared tiles through it.
template <int B, int M, int S>
__device__ __forceinline__ int swizzle_offset(int x) {
  if constexpr (B == 0) {
    return x;
  } else if constexpr (S >= 0) {
    return x ^ ((x & (((1 << B) - 1) << (M + S))) >> S);
  } else {
    return x ^ ((x & (((1 << B) - 1) << M)) << -S);
  }
}

}  // namespace device
}  // namespace tessel
