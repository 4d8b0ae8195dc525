// A host stand-in for the device library, so that an emitted sm_80 GEMM runs on the CPU as C++
// (one std::thread per CUDA thread) in tests that have no GPU. Force-included (g++ -include)
// before the emitted source; the emitted `#include "tessel_device.cuh"` and
// `"emitted_support.cuh"` then find empty files.
//
// The stand-ins follow the PTX contracts, written here from the PTX ISA independently of the
// emitter and of target/cuda/atoms.cpp: ldmatrix (lanes 8j..8j+7 give the rows of matrix j; lane
// l receives row l/4, columns 2(l%4), +1, or with .trans column l/4, rows 2(l%4), +1), mma.sync
// m16n8k16 (HOPPER.md §7 fragments), __syncthreads as a block barrier, warp-wide instructions as a
// barrier of the warp's 32 threads around an exchange. cp.async copies are queued per thread in
// commit groups and performed at the latest moment the program allows (the wait that covers
// them) or, in eager mode, at once; either way a kernel that reads a slot before its wait, or
// overwrites it while others read, computes a wrong result.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n)
#define __shared__

// The device's fast division (within 2 ulp there) as the interpreter divides.
inline float __fdividef(float a, float b) {
  return a / b;
}

// The device's sigmoid (ex2.approx and rcp.approx, __expf's error bound) as the interpreter
// computes it.
namespace tessel {
namespace device {
inline float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}
}  // namespace device
}  // namespace tessel

struct tsl_dim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local tsl_dim3 threadIdx, blockIdx, gridDim;

struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};
struct float2 {
  float x, y;
};
struct float4 {
  float x, y, z, w;
};
inline uint2 make_uint2(unsigned x, unsigned y) {
  return {x, y};
}
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return {x, y, z, w};
}
inline float2 make_float2(float x, float y) {
  return {x, y};
}
inline float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline float __uint_as_float(unsigned i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline unsigned tsl_float_bits(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}
using std::max;
using std::min;

// The block's dynamic shared memory (blocks run one at a time).
alignas(1024) inline unsigned char tsl_smem_raw[232448];

namespace tsl_sim {

struct Warp {
  std::barrier<> bar{32};
  const unsigned char* addr[32] = {};
  unsigned a[32][4] = {}, b[32][2] = {};
  float c[32][4] = {};
};

struct Block {
  explicit Block(int threads) : bar(threads) {
    for (int w = 0; w < (threads + 31) / 32; ++w) warps.push_back(std::make_unique<Warp>());
  }
  std::barrier<> bar;
  std::vector<std::unique_ptr<Warp>> warps;
};

inline Block* block = nullptr;
inline bool eager = false;          // cp.async lands at issue instead of at the wait
inline std::atomic<int> errors{0};  // copies still pending when a thread ends, etc.

struct Copy {
  unsigned char* dst;
  const unsigned char* src;
  unsigned bytes, src_bytes;
  void run() const {
    std::memcpy(dst, src, src_bytes);
    std::memset(dst + src_bytes, 0, bytes - src_bytes);
  }
};
inline thread_local std::vector<Copy> open_group;
inline thread_local std::vector<std::vector<Copy>> groups;

inline Warp& warp() {
  return *block->warps[threadIdx.x / 32];
}
inline int lane() {
  return threadIdx.x % 32;
}

// Runs `kernel` once per thread of every block of a gx x gy grid.
inline void run_grid(int gx, int gy, int threads, const std::function<void()>& kernel) {
  for (int by = 0; by < gy; ++by) {
    for (int bx = 0; bx < gx; ++bx) {
      Block b(threads);
      block = &b;
      std::memset(tsl_smem_raw, 0xAB, sizeof tsl_smem_raw);  // stale garbage, not zeros
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          threadIdx = {unsigned(t), 0, 0};
          blockIdx = {unsigned(bx), unsigned(by), 0};
          gridDim = {unsigned(gx), unsigned(gy), 1};
          open_group.clear();
          groups.clear();
          kernel();
          bool pending = !open_group.empty();
          for (const auto& g : groups) pending = pending || !g.empty();
          if (pending) ++errors;
        });
      }
      for (auto& th : pool) th.join();
      block = nullptr;
    }
  }
}

inline float f16_to_f32(unsigned short h) {
  unsigned sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
  float v;
  if (exp == 0) {
    v = std::ldexp(float(man), -24);
  } else if (exp == 31) {
    v = man ? __builtin_nanf("") : __builtin_inff();
  } else {
    v = std::ldexp(float(man | 1024), int(exp) - 25);
  }
  return sign ? -v : v;
}
inline unsigned short f32_to_f16(float f) {  // round to nearest even
  unsigned u = tsl_float_bits(f), sign = (u >> 16) & 0x8000u;
  float a = std::fabs(f);
  if (a != a) return 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -14)) {  // subnormal: units of 2^-24
    float q = std::nearbyint(a * std::ldexp(1.0f, 24));
    return sign | unsigned(q);
  }
  int e;
  float m = std::frexp(a, &e);            // a = m * 2^e, m in [0.5, 1)
  float q = std::nearbyint(m * 2048.0f);  // 11 significant bits
  if (q == 2048.0f) {
    q = 1024.0f;
    ++e;
  }
  unsigned exp = unsigned(e - 1 + 15);
  if (exp >= 31) return sign | 0x7c00;
  return sign | (exp << 10) | (unsigned(q) & 1023u);
}
inline float bf16_to_f32(unsigned short h) {
  return __uint_as_float(unsigned(h) << 16);
}
inline unsigned short f32_to_bf16(float f) {
  unsigned u = tsl_float_bits(f);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

}  // namespace tsl_sim

inline void __syncthreads() {
  tsl_sim::block->bar.arrive_and_wait();
}

// ---- emitted_support.cuh ----------------------------------------------------------------------
inline float tsl_f16_to_f32(unsigned short h) {
  return tsl_sim::f16_to_f32(h);
}
inline unsigned short tsl_f32_to_f16(float f) {
  return tsl_sim::f32_to_f16(f);
}
inline float tsl_bf16_to_f32(unsigned short h) {
  return tsl_sim::bf16_to_f32(h);
}
inline unsigned short tsl_f32_to_bf16(float f) {
  return tsl_sim::f32_to_bf16(f);
}
inline float tsl_round_f16(float f) {
  return tsl_f16_to_f32(tsl_f32_to_f16(f));
}
inline float tsl_round_bf16(float f) {
  return tsl_bf16_to_f32(tsl_f32_to_bf16(f));
}
inline float tsl_load(const float* p) {
  return *p;
}
inline float tsl_load(const unsigned short* p, bool bf) {
  return bf ? tsl_bf16_to_f32(*p) : tsl_f16_to_f32(*p);
}
inline unsigned short tsl_cvt16(float f, bool bf) {
  return bf ? tsl_f32_to_bf16(f) : tsl_f32_to_f16(f);
}
inline float tsl_lo16(unsigned w, bool bf) {
  return bf ? tsl_bf16_to_f32(w & 0xffffu) : tsl_f16_to_f32(w & 0xffffu);
}
inline float tsl_hi16(unsigned w, bool bf) {
  return bf ? tsl_bf16_to_f32(w >> 16) : tsl_f16_to_f32(w >> 16);
}
template <int W>
struct tsl_raw16 {
  unsigned short h[W];
};
template <int W>
tsl_raw16<W> tsl_fetch16(const unsigned short* p, bool ok, unsigned fill = 0u) {
  tsl_raw16<W> r;
  for (int i = 0; i < W; ++i)
    r.h[i] = ok ? p[i] : static_cast<unsigned short>(i % 2 ? fill >> 16 : fill & 0xffffu);
  return r;
}
template <int W>
void tsl_words16(const tsl_raw16<W>& r, unsigned* o) {
  for (int i = 0; i < W / 2; ++i) o[i] = unsigned(r.h[2 * i]) | (unsigned(r.h[2 * i + 1]) << 16);
}
template <int W>
void tsl_load16_words(const unsigned short* p, unsigned* o) {
  tsl_words16<W>(tsl_fetch16<W>(p, true), o);
}
template <int W>
void tsl_unpack16(const tsl_raw16<W>& r, float* o, bool bf, bool ok, float pad) {
  for (int i = 0; i < W; ++i) o[i] = ok ? tsl_load(&r.h[i], bf) : pad;
}
template <int W>
struct tsl_raw32 {
  float f[W];
};
template <int W>
tsl_raw32<W> tsl_fetch32(const float* p, bool ok) {
  tsl_raw32<W> r;
  for (int i = 0; i < W; ++i) r.f[i] = ok ? p[i] : 0.f;
  return r;
}
template <int W>
void tsl_unpack32(const tsl_raw32<W>& r, float* o, bool ok, float pad) {
  for (int i = 0; i < W; ++i) o[i] = ok ? r.f[i] : pad;
}
template <int W>
void tsl_load16(const unsigned short* p, float* o, bool bf) {
  for (int i = 0; i < W; ++i) o[i] = tsl_load(p + i, bf);
}
template <int W>
void tsl_store16(unsigned short* p, const float* o, bool bf) {
  for (int i = 0; i < W; ++i) p[i] = tsl_cvt16(o[i], bf);
}
template <int W>
void tsl_load32(const float* p, float* o) {
  for (int i = 0; i < W; ++i) o[i] = p[i];
}
template <int W>
void tsl_store32(float* p, const float* o) {
  for (int i = 0; i < W; ++i) p[i] = o[i];
}

// ---- the device library's sm_80 part -----------------------------------------------------------
namespace tessel::device {

inline unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(reinterpret_cast<uintptr_t>(p));
}

inline void cp_async_push(void* dst, const void* src, unsigned bytes, unsigned src_bytes) {
  tsl_sim::Copy c{static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), bytes,
                  src_bytes};
  if (reinterpret_cast<uintptr_t>(dst) % bytes != 0) ++tsl_sim::errors;  // misaligned
  if (dst < tsl_smem_raw || c.dst + bytes > tsl_smem_raw + sizeof tsl_smem_raw) ++tsl_sim::errors;
  if (tsl_sim::eager) {
    c.run();
  } else {
    tsl_sim::open_group.push_back(c);
  }
}
inline void cp_async_cg16(void* dst, const void* src) {
  cp_async_push(dst, src, 16, 16);
}
inline void cp_async_cg16_zfill(void* dst, const void* src, unsigned src_bytes) {
  cp_async_push(dst, src, 16, src_bytes);
}
template <int Bytes>
void cp_async_ca(void* dst, const void* src) {
  cp_async_push(dst, src, Bytes, Bytes);
}
template <int Bytes>
void cp_async_ca_zfill(void* dst, const void* src, unsigned src_bytes) {
  cp_async_push(dst, src, Bytes, src_bytes);
}
inline void cp_async_commit_group() {
  tsl_sim::groups.push_back(std::move(tsl_sim::open_group));
  tsl_sim::open_group.clear();
}
template <int N>
void cp_async_wait_group() {
  while (static_cast<int>(tsl_sim::groups.size()) > N) {
    for (const auto& c : tsl_sim::groups.front()) c.run();
    tsl_sim::groups.erase(tsl_sim::groups.begin());
  }
}
inline void cp_async_wait_all() {
  cp_async_commit_group();
  cp_async_wait_group<0>();
}

// ldmatrix: every lane posts its row address; then lane l reads its registers from the rows.
inline void ldmatrix(int count, bool trans, unsigned* r, const void* row_address) {
  tsl_sim::Warp& w = tsl_sim::warp();
  int l = tsl_sim::lane();
  w.addr[l] = static_cast<const unsigned char*>(row_address);
  w.bar.arrive_and_wait();
  for (int j = 0; j < count; ++j) {
    unsigned short h[2];
    for (int k = 0; k < 2; ++k) {
      const unsigned char* p = trans ? w.addr[8 * j + 2 * (l % 4) + k] + 2 * (l / 4)
                                     : w.addr[8 * j + l / 4] + 2 * (2 * (l % 4) + k);
      if (reinterpret_cast<uintptr_t>(w.addr[8 * j + (trans ? 2 * (l % 4) + k : l / 4)]) % 16)
        ++tsl_sim::errors;  // row addresses must be 16-byte aligned
      std::memcpy(&h[k], p, 2);
    }
    r[j] = unsigned(h[0]) | (unsigned(h[1]) << 16);
  }
  w.bar.arrive_and_wait();
}
inline void ldmatrix_x1(unsigned& r0, const void* a) {
  ldmatrix(1, false, &r0, a);
}
inline void ldmatrix_x2(unsigned& r0, unsigned& r1, const void* a) {
  unsigned r[2];
  ldmatrix(2, false, r, a);
  r0 = r[0], r1 = r[1];
}
inline void ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, const void* a) {
  unsigned r[4];
  ldmatrix(4, false, r, a);
  r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3];
}
inline void ldmatrix_x4_trans(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                              const void* a) {
  unsigned r[4];
  ldmatrix(4, true, r, a);
  r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3];
}

// mma.sync m16n8k16 row.col, f32 accumulators: the warp's fragments gathered, D = A B + C.
inline void mma(bool bf, float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1,
                unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  tsl_sim::Warp& w = tsl_sim::warp();
  int l = tsl_sim::lane();
  unsigned av[4] = {a0, a1, a2, a3};
  std::memcpy(w.a[l], av, sizeof av);
  w.b[l][0] = b0, w.b[l][1] = b1;
  w.c[l][0] = d0, w.c[l][1] = d1, w.c[l][2] = d2, w.c[l][3] = d3;
  w.bar.arrive_and_wait();
  auto val = [bf](unsigned reg, int half) {
    unsigned short h = static_cast<unsigned short>(half ? reg >> 16 : reg & 0xffffu);
    return bf ? tsl_sim::bf16_to_f32(h) : tsl_sim::f16_to_f32(h);
  };
  float A[16][16], B[16][8];  // A[row][k], B[k][n]
  for (int ln = 0; ln < 32; ++ln) {
    int g = ln / 4, q = ln % 4;
    for (int i = 0; i < 8; ++i)
      A[g + 8 * ((i >> 1) & 1)][2 * q + (i & 1) + 8 * (i >> 2)] = val(w.a[ln][i / 2], i % 2);
    for (int i = 0; i < 4; ++i) B[2 * q + (i & 1) + 8 * (i >> 1)][g] = val(w.b[ln][i / 2], i % 2);
  }
  float out[4];
  int g = l / 4, q = l % 4;
  for (int i = 0; i < 4; ++i) {
    int row = g + 8 * (i >> 1), col = 2 * q + (i & 1);
    float s = w.c[l][i];
    for (int k = 0; k < 16; ++k) s += A[row][k] * B[k][col];
    out[i] = s;
  }
  w.bar.arrive_and_wait();
  d0 = out[0], d1 = out[1], d2 = out[2], d3 = out[3];
}
inline void mma_m16n8k16_f32_f16(float& d0, float& d1, float& d2, float& d3, unsigned a0,
                                 unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  mma(false, d0, d1, d2, d3, a0, a1, a2, a3, b0, b1);
}
inline void mma_m16n8k16_f32_bf16(float& d0, float& d1, float& d2, float& d3, unsigned a0,
                                  unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  mma(true, d0, d1, d2, d3, a0, a1, a2, a3, b0, b1);
}
inline unsigned pack_b16x2(unsigned short lo, unsigned short hi) {
  return unsigned(lo) | (unsigned(hi) << 16);
}
inline unsigned short half_b16(unsigned r, int h) {
  return static_cast<unsigned short>(h ? r >> 16 : r & 0xffffu);
}
inline unsigned short ld_shared_b16(const void* p) {
  unsigned short h;
  std::memcpy(&h, p, 2);
  return h;
}
inline unsigned pack_f16x2(float lo, float hi) {
  return pack_b16x2(tsl_sim::f32_to_f16(lo), tsl_sim::f32_to_f16(hi));
}
inline unsigned pack_bf16x2(float lo, float hi) {
  return pack_b16x2(tsl_sim::f32_to_bf16(lo), tsl_sim::f32_to_bf16(hi));
}
// CuTe's Sw<B,M,S> (layout/swizzle.h), as runtime/device/mma_sync.cuh computes it.
template <int B, int M, int S>
int swizzle_offset(int x) {
  if constexpr (B == 0) {
    return x;
  } else if constexpr (S >= 0) {
    return x ^ ((x & (((1 << B) - 1) << (M + S))) >> S);
  } else {
    return x ^ ((x & (((1 << B) - 1) << M)) << -S);
  }
}

}  // namespace tessel::device
