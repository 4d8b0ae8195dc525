// Helpers that generated kernels call: f16/bf16 <-> f32 conversions (16-bit values live in f32
// registers in emitted code, or in packed pairs) and vector global accesses of 2, 4 or 8 16-bit
// elements, with and without bounds predicates. Kept here, not pasted into every kernel, so that
// emitted code stays short and these helpers compile and are reviewed once.
#pragma once

#include "convert.cuh"

__device__ __forceinline__ float tsl_f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short tsl_f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float tsl_bf16_to_f32(unsigned short h) {
  return __uint_as_float(static_cast<unsigned>(h) << 16);
}
__device__ __forceinline__ unsigned short tsl_f32_to_bf16(float f) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float tsl_round_f16(float f) { return tsl_f16_to_f32(tsl_f32_to_f16(f)); }
__device__ __forceinline__ float tsl_round_bf16(float f) { return tsl_bf16_to_f32(tsl_f32_to_bf16(f)); }
// The low and high 16-bit values of a packed pair (a packed register tensor's word) as floats.
__device__ __forceinline__ float tsl_lo16(unsigned w, bool bf) {
  return bf ? tsl_bf16_to_f32(w & 0xffffu) : tsl_f16_to_f32(w & 0xffffu);
}
__device__ __forceinline__ float tsl_hi16(unsigned w, bool bf) {
  return bf ? tsl_bf16_to_f32(w >> 16) : tsl_f16_to_f32(w >> 16);
}
__device__ __forceinline__ float tsl_load(const float* p) { return *p; }
__device__ __forceinline__ float tsl_load(const unsigned short* p, bool bf) {
  return bf ? tsl_bf16_to_f32(*p) : tsl_f16_to_f32(*p);
}
__device__ __forceinline__ unsigned short tsl_cvt16(float f, bool bf) {
  return bf ? tsl_f32_to_bf16(f) : tsl_f32_to_f16(f);
}
// Masked vector loads in two steps: every fetch of a tile first (a predicated 16/8/4-byte load of
// raw words, zeros where out of bounds), then the conversions. Converting right after each load
// inside its bounds branch made every load wait for the one before (one load in flight a thread).
template <int W> struct tsl_raw16 { unsigned w[W / 2]; };
// A 16-byte streaming load: data read once (a GEMV's matrix) skips L1 and is marked first to
// leave L2 (createpolicy's evict-first encoding, as CUTLASS writes it), so it does not push out
// lines that other data still needs (or that are dirty and would have to be written back first).
__device__ __forceinline__ uint4 tsl_ld_stream16(const void* p) {
  uint4 u;
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
               : "l"(p), "l"(0x12F0000000000000ull));
  return u;
}
// A 16-byte load under a guard into registers that hold `fill` where the guard is false, in one
// asm statement: written as `ok ? load : fill` in C++, ptxas sinks the choice past the
// conversions that follow, a select per converted value (FSEL; 128 of LayerNorm's ~730
// instructions a thread at N = 8192).
template <bool Stream>
__device__ __forceinline__ uint4 tsl_ld_guarded16(const void* p, bool ok, unsigned fill) {
  uint4 u;
  if constexpr (Stream) {
    asm volatile(
        "{\n .reg .pred g;\n setp.ne.b32 g, %5, 0;\n mov.b32 %0, %6;\n mov.b32 %1, %6;\n"
        " mov.b32 %2, %6;\n mov.b32 %3, %6;\n"
        " @g ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %7;\n}\n"
        : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
        : "l"(p), "r"(int(ok)), "r"(fill), "l"(0x12F0000000000000ull));
  } else {
    asm volatile(
        "{\n .reg .pred g;\n setp.ne.b32 g, %5, 0;\n mov.b32 %0, %6;\n mov.b32 %1, %6;\n"
        " mov.b32 %2, %6;\n mov.b32 %3, %6;\n @g ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n}\n"
        : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
        : "l"(p), "r"(int(ok)), "r"(fill));
  }
  return u;
}
// The same guarded 16-byte load of data that no thread of the launch writes and every block
// reads (a row program's weight and bias vectors): the non-coherent path (ld.global.nc, cached
// in L1 beside the texture path). Volatile like tsl_ld_guarded16, so that the loads stay where
// the chunked run (emit_chunked.cpp) puts them: left free to move, ptxas hoisted LayerNorm's
// weight and bias loads at [1,32768] ahead and spilled 20 bytes at 32 registers, in order 8.
__device__ __forceinline__ uint4 tsl_ld_guarded16_invariant(const void* p, bool ok, unsigned fill) {
  uint4 u;
  asm volatile("{\n .reg .pred g;\n setp.ne.b32 g, %5, 0;\n mov.b32 %0, %6;\n mov.b32 %1, %6;\n"
      " mov.b32 %2, %6;\n mov.b32 %3, %6;\n @g ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n}\n"
      : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
      : "l"(p), "r"(int(ok)), "r"(fill));
  return u;
}
// `fill`: the word out-of-bounds lanes get (two 16-bit values): the pad's bits where the pad is
// exact in the element type or the fetch lands in a packed register tensor (tsl_words16), else
// zeros, and tsl_unpack16 selects the pad after converting. `Invariant`: the data no thread of
// the launch writes and every block reads (tsl_ld_guarded16_invariant; 16-byte fetches only).
template <int W, bool Stream = false, bool Invariant = false>
__device__ __forceinline__ tsl_raw16<W> tsl_fetch16(const unsigned short* p, bool ok, unsigned fill = 0u) {
  tsl_raw16<W> r;
  if constexpr (W == 8) {
    uint4 u = Invariant ? tsl_ld_guarded16_invariant(p, ok, fill) : tsl_ld_guarded16<Stream>(p, ok, fill);
    r.w[0] = u.x; r.w[1] = u.y; r.w[2] = u.z; r.w[3] = u.w;
  } else if constexpr (W == 4) {
    uint2 u = ok ? *reinterpret_cast<const uint2*>(p) : make_uint2(fill, fill);
    r.w[0] = u.x; r.w[1] = u.y;
  } else {
    r.w[0] = ok ? *reinterpret_cast<const unsigned*>(p) : fill;
  }
  return r;
}
// The conversion of a fetch whose out-of-bounds lanes hold the pad's bits (exact in the element
// type): no select after it.
template <int W>
__device__ __forceinline__ void tsl_unpack16(const tsl_raw16<W>& r, float* o, bool bf) {
#pragma unroll
  for (int i = 0; i < W / 2; ++i) {
    o[2 * i] = bf ? tsl_bf16_to_f32(r.w[i] & 0xffffu) : tsl_f16_to_f32(r.w[i] & 0xffffu);
    o[2 * i + 1] = bf ? tsl_bf16_to_f32(r.w[i] >> 16) : tsl_f16_to_f32(r.w[i] >> 16);
  }
}
// A fetch's words into a packed register tensor (two 16-bit values a word, as loaded).
template <int W>
__device__ __forceinline__ void tsl_words16(const tsl_raw16<W>& r, unsigned* o) {
#pragma unroll
  for (int i = 0; i < W / 2; ++i) o[i] = r.w[i];
}
template <int W, bool Stream = false>
__device__ __forceinline__ void tsl_load16_words(const unsigned short* p, unsigned* o) {
  tsl_words16<W>(tsl_fetch16<W, Stream>(p, true), o);
}
template <int W>
__device__ __forceinline__ void tsl_unpack16(const tsl_raw16<W>& r, float* o, bool bf, bool ok, float pad) {
#pragma unroll
  for (int i = 0; i < W / 2; ++i) {
    float lo = bf ? tsl_bf16_to_f32(r.w[i] & 0xffffu) : tsl_f16_to_f32(r.w[i] & 0xffffu);
    float hi = bf ? tsl_bf16_to_f32(r.w[i] >> 16) : tsl_f16_to_f32(r.w[i] >> 16);
    o[2 * i] = ok ? lo : pad;
    o[2 * i + 1] = ok ? hi : pad;
  }
}
template <int W> struct tsl_raw32 { float f[W]; };
// Coherent = true: loads cached in L2 only (ld.global.cg), for data other blocks of the same
// launch wrote and this block reads once (split-k's partial tiles): no line of it is taken from
// or left in this SM's L1 (the acquire fence before the reads also invalidates L1 in the SASS;
// this does not depend on it).
template <int W, bool Coherent = false>
__device__ __forceinline__ tsl_raw32<W> tsl_fetch32(const float* p, bool ok) {
  tsl_raw32<W> r;
  if constexpr (W == 4) {
    const float4* q = reinterpret_cast<const float4*>(p);
    float4 u = ok ? (Coherent ? __ldcg(q) : *q) : make_float4(0.f, 0.f, 0.f, 0.f);
    r.f[0] = u.x; r.f[1] = u.y; r.f[2] = u.z; r.f[3] = u.w;
  } else {
    const float2* q = reinterpret_cast<const float2*>(p);
    float2 u = ok ? (Coherent ? __ldcg(q) : *q) : make_float2(0.f, 0.f);
    r.f[0] = u.x; r.f[1] = u.y;
  }
  return r;
}
template <int W>
__device__ __forceinline__ void tsl_unpack32(const tsl_raw32<W>& r, float* o, bool ok, float pad) {
#pragma unroll
  for (int i = 0; i < W; ++i) o[i] = ok ? r.f[i] : pad;
}
// W 16-bit elements (W = 2, 4, 8) from 4*W/2 aligned bytes into o[0..W).
template <int W, bool Stream = false>
__device__ __forceinline__ void tsl_load16(const unsigned short* p, float* o, bool bf) {
  unsigned w[W / 2];
  if constexpr (W == 8 && Stream) {
    uint4 u = tsl_ld_stream16(p); w[0] = u.x; w[1] = u.y; w[2] = u.z; w[3] = u.w;
  } else if constexpr (W == 8) {
    uint4 u = *reinterpret_cast<const uint4*>(p); w[0] = u.x; w[1] = u.y; w[2] = u.z; w[3] = u.w;
  } else if constexpr (W == 4) {
    uint2 u = *reinterpret_cast<const uint2*>(p); w[0] = u.x; w[1] = u.y;
  } else {
    w[0] = *reinterpret_cast<const unsigned*>(p);
  }
#pragma unroll
  for (int i = 0; i < W / 2; ++i) {
    o[2 * i] = bf ? tsl_bf16_to_f32(w[i] & 0xffffu) : tsl_f16_to_f32(w[i] & 0xffffu);
    o[2 * i + 1] = bf ? tsl_bf16_to_f32(w[i] >> 16) : tsl_f16_to_f32(w[i] >> 16);
  }
}
template <int W>
__device__ __forceinline__ void tsl_store16(unsigned short* p, const float* o, bool bf) {
  unsigned w[W / 2];
#pragma unroll
  for (int i = 0; i < W / 2; ++i) {
    w[i] = bf ? tessel::device::pack_bf16x2(o[2 * i], o[2 * i + 1])
              : tessel::device::pack_f16x2(o[2 * i], o[2 * i + 1]);
  }
  if constexpr (W == 8) {
    *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  } else if constexpr (W == 4) {
    *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
  } else {
    *reinterpret_cast<unsigned*>(p) = w[0];
  }
}
template <int W, bool Coherent = false>
__device__ __forceinline__ void tsl_load32(const float* p, float* o) {
  if constexpr (W == 4) {
    const float4* q = reinterpret_cast<const float4*>(p);
    float4 u = Coherent ? __ldcg(q) : *q; o[0] = u.x; o[1] = u.y; o[2] = u.z; o[3] = u.w;
  } else {
    const float2* q = reinterpret_cast<const float2*>(p);
    float2 u = Coherent ? __ldcg(q) : *q; o[0] = u.x; o[1] = u.y;
  }
}
template <int W>
__device__ __forceinline__ void tsl_store32(float* p, const float* o) {
  if constexpr (W == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(o[0], o[1], o[2], o[3]);
  } else {
    *reinterpret_cast<float2*>(p) = make_float2(o[0], o[1]);
  }
}
