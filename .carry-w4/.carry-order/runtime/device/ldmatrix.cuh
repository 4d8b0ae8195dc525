// ldmatrix / stmatrix: warp-wide moves of 8×8 matrices of 16-bit elements between shared memory
// and registers, in the fragment layout of mma.sync and of the wgmma accumulator.
//
// For .x1/.x2/.x4, lanes 8j..8j+7 supply the shared addresses (16-byte aligned) of the eight
// 16-byte rows of matrix j (x1 reads lanes 0-7, x2 lanes 0-15, x4 all lanes). Register j of lane
// l holds row l/4, columns 2·(l%4) and 2·(l%4)+1 of matrix j (low half = lower column). With
// .trans it holds column l/4, rows 2·(l%4) and +1 instead. All 32 lanes execute the instruction.
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

// ldmatrix.sync.aligned.m8n8.x1.shared.b16
__device__ __forceinline__ void ldmatrix_x1(unsigned& r0, const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
               : "=r"(r0)
               : "r"(smem_u32(row_address))
               : "memory");
}

// ldmatrix.sync.aligned.m8n8.x2.shared.b16
__device__ __forceinline__ void ldmatrix_x2(unsigned& r0, unsigned& r1, const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1)
               : "r"(smem_u32(row_address))
               : "memory");
}

// ldmatrix.sync.aligned.m8n8.x4.shared.b16
__device__ __forceinline__ void ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                                            const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_u32(row_address))
               : "memory");
}

// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned& r0, unsigned& r1, unsigned& r2,
                                                  unsigned& r3, const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_u32(row_address))
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x1.shared.b16 (sm_90)
__device__ __forceinline__ void stmatrix_x1(void* row_address, unsigned r0) {
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(smem_u32(row_address)),
               "r"(r0)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x2.shared.b16
__device__ __forceinline__ void stmatrix_x2(void* row_address, unsigned r0, unsigned r1) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(smem_u32(row_address)),
      "r"(r0), "r"(r1)
      : "memory");
}

// stmatrix.sync.aligned.m8n8.x4.shared.b16: the wgmma epilogue store. For a 16×16 block of a
// converted accumulator (registers i = 0..7 of one column octet pair, packed two per b32), r0..r3
// are matrices (rows 0-7, cols 0-7), (rows 8-15, cols 0-7), (rows 0-7, cols 8-15),
// (rows 8-15, cols 8-15).
__device__ __forceinline__ void stmatrix_x4(void* row_address, unsigned r0, unsigned r1,
                                            unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                   smem_u32(row_address)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
__device__ __forceinline__ void stmatrix_x4_trans(void* row_address, unsigned r0, unsigned r1,
                                                  unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                   smem_u32(row_address)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace device
}  // namespace tessel
