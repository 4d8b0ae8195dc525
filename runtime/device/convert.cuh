// Numeric packing for epilogues: two f32 values rounded into one b32 of f16x2 or bf16x2, without
// <cuda_fp16.h> (which NVRTC cannot find without the toolkit's include path).
#pragma once

namespace tessel {
namespace device {

// cvt.rn.f16x2.f32 d, hi, lo: `lo` lands in the low half (the lower column / address).
__device__ __forceinline__ unsigned pack_f16x2(float lo, float hi) {
  unsigned packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

// cvt.rn.bf16x2.f32 d, hi, lo.
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  unsigned packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

}  // namespace device
}  // namespace tessel
