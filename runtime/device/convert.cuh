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

// 2^x by ex2.approx.ftz.f32: one MUFU.EX2 (exp2f without fast math adds denormal handling
// around it). Relative error about 2^-22; subnormal results flush to zero.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace device
}  // namespace tessel
