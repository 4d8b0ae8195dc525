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

// tanh by tanh.approx.f32: one MUFU.TANH (tanhf without fast math is a sequence of ~20
// instructions around an ex2 and a reciprocal). The PTX ISA gives its maximum relative error as
// about 2^-11: the tile program asks for it with `tanh {approx}`.
__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 1 / x by rcp.approx.ftz.f32: one MUFU.RCP, within 1 ulp (the IEEE division adds a range check
// and a slow path, __fdividef a range check and a scaling for divisors past 2^126).
__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// sigmoid(x) = 1 / (1 + e^-x) in four instructions (FMUL, MUFU.EX2, FADD, MUFU.RCP) where
// expf and __fdividef take 14: e^-x = 2^(x * -log2 e) by ex2.approx. Its error is CUDA's __expf
// bound, 2 + 1.2|x| ulp (the product x * log2 e rounds): 3 ulp for |x| <= 1, 21 at |x| = 16 (where
// sigma(-16) is 1.1e-7), and below 2^-17 relative over the whole range, far inside an f16 or
// bf16 output's rounding. +-inf give 1 and 0, NaN stays NaN; results below 2^-126 flush to zero.
__device__ __forceinline__ float sigmoid(float x) {
  return rcp_approx(1.0f + exp2_approx(x * -1.44269504f));
}

// sigmoid(x) = 0.5 tanh(x / 2) + 0.5: one MUFU.TANH and two FMA-pipe ops (`sigmoid {approx}`).
__device__ __forceinline__ float sigmoid_approx(float x) {
  return fmaf(0.5f, tanh_approx(0.5f * x), 0.5f);
}

// Two 4-bit values (the low and high nibble of `byte`) as an f16x2 word, exactly: each nibble
// OR-ed into the mantissa of 1024.0 (0x6400: the f16 whose ulp is 1), then 1024 subtracted (and
// 8 more when `minus8`: i4's values, passed as n ^ 8) by one packed sub.
__device__ __forceinline__ unsigned u4x2_to_f16x2(unsigned byte, bool minus8) {
  const unsigned biased = (byte & 0xFu) | ((byte & 0xF0u) << 12) | 0x64006400u;
  const unsigned bias = minus8 ? 0x64086408u : 0x64006400u;
  unsigned out;
  asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(out) : "r"(biased), "r"(bias));
  return out;
}

// Two 4-bit values of a 32-bit word of eight as an f16x2 word, minus an integer `c`, exactly:
// nibbles p (low half) and p + 4 (high half), p = 0..3. One lop3 moves both into the mantissas
// of 1024.0 (0x6400: the f16 whose ulp is 1) — the word shifted right by 8 for p >= 2, and for
// odd p the nibbles land 4 bits up, as 1024 + 16n — then one packed instruction removes the bias
// and c: sub of `bias` (= 1024 + c) for even p, fma by 1/16 (0x2C00) plus `bias` (= -(64 + c))
// for odd p. Every intermediate is an integer below 2048, so both are exact. (The nibble order
// that TensorRT-LLM and Marlin interleave their int4 weights into, for the same instruction.)
__device__ __forceinline__ unsigned u4_pair_to_f16x2(unsigned word, int p, unsigned bias) {
  const unsigned w = p >= 2 ? word >> 8 : word;
  const unsigned mask = (p & 1) ? 0x00F000F0u : 0x000F000Fu;
  unsigned biased, out;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(biased) : "r"(w), "r"(mask), "r"(0x64006400u));
  if (p & 1) {
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(out) : "r"(biased), "r"(0x2C002C00u), "r"(bias));
  } else {
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(out) : "r"(biased), "r"(bias));
  }
  return out;
}

// Two fp8 values as an f16x2 word, exactly (every e4m3 and e5m2 value is an f16): the low byte
// of `pair` becomes the low half, the high byte the high half (PTX ISA, cvt: "the upper 8 bits
// ... to the upper half"). One cvt.rn.f16x2.e4m3x2 / e5m2x2 (sm_89 and later).
enum class Fp8 { e4m3, e5m2 };
template <Fp8 kind>
__device__ __forceinline__ unsigned fp8x2_to_f16x2(unsigned short pair) {
  unsigned out;
  if constexpr (kind == Fp8::e4m3) {
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(out) : "h"(pair));
  } else {
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(out) : "h"(pair));
  }
  return out;
}

// Packed 16-bit arithmetic, each result rounded to the format as the tile IR's ops on f16 and
// bf16 values are (add/sub/mul/fma .rn; max/min exact). `bf` picks bf16x2 (sm_90) over f16x2;
// it is a constant at every call, so one instruction remains.
#define TESSEL_X2_BINARY(name, op)                                                 \
  __device__ __forceinline__ unsigned name(unsigned a, unsigned b, bool bf) {      \
    unsigned d;                                                                    \
    if (bf) asm(op ".bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));              \
    else asm(op ".f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));                  \
    return d;                                                                      \
  }
TESSEL_X2_BINARY(add_x2, "add.rn")
TESSEL_X2_BINARY(sub_x2, "sub.rn")
TESSEL_X2_BINARY(mul_x2, "mul.rn")
TESSEL_X2_BINARY(max_x2, "max")
TESSEL_X2_BINARY(min_x2, "min")
#undef TESSEL_X2_BINARY

__device__ __forceinline__ unsigned fma_x2(unsigned a, unsigned b, unsigned c, bool bf) {
  unsigned d;
  if (bf) asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  else asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

}  // namespace device
}  // namespace tessel
