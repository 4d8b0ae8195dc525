// Stand-alone probe (not product code): where do wide-row norms with column vectors lose on the
// H200? tessel's LayerNorm reads its weight and bias (2 x N f16) once per row; at N = 32768 that
// is 128 KiB a row, which L1 does not keep beside two blocks' 64 KiB rows of shared memory
// (ncu: 0.4 M L1 hits of 12.6 M load sectors, 10.5 M L2 read sectors;
// bench/results/2026-11-28-exp-to-exp2-h200.md), and it runs at 0.87-0.91 of a copy. RMSNorm
// (one weight) loses L1 hits at 2047 x 32760 (rows 16-byte but not 128-byte aligned) and drops
// from 0.98 to 0.92. Variants, each one row a block unless said:
//   cp        the row fetched whole by every thread's 16-byte cp.async (tessel's form today)
//   bulk      the row fetched whole by cp.async.bulk (TMA, one mbarrier): no per-thread copies,
//             nothing through L1
//   +last     the column vectors read with ld.global.L1::evict_last
//   /B        at most B blocks a SM (dynamic shared memory padded to limit them)
//   regs      1024 threads, the row in registers (four 16-byte vectors a thread), no shared row
// Checked against float64 on four rows, timed against copy16 in the same process (median of 30
// event timings).
//
//   nvcc -std=c++17 -O3 -arch=sm_90a scripts/gpu/rows_columns_probe.cu -o rows_columns_probe
//   ./rows_columns_probe MxN ...
#include "probe_common.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

template <bool LAST>
__device__ __forceinline__ uint4 ld_column(const uint4* p) {
  uint4 u;
  if (LAST)
    asm volatile("ld.global.L1::evict_last.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                 : "l"(p));
  else
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                 : "l"(p));
  return u;
}

// The row fetched into shared memory `row` (nv 16-byte vectors).
template <int THREADS, bool BULK>
__device__ __forceinline__ void fetch_row(uint4* row, const uint4* src, int nv,
                                          unsigned long long* bar) {
  if (!BULK) {
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      unsigned s = (unsigned)__cvta_generic_to_shared(&row[v]);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(&src[v]));
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    return;
  }
  const unsigned b = (unsigned)__cvta_generic_to_shared(bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int bytes = nv * 16;
  const int chunk = 16384;  // one bulk copy a lane of warp 0, 16 KiB each
  if (threadIdx.x == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes)
                 : "memory");
  __syncwarp();
  if (threadIdx.x < 32) {
    for (int off = threadIdx.x * chunk; off < bytes; off += 32 * chunk) {
      const int n = min(chunk, bytes - off);
      unsigned d = (unsigned)__cvta_generic_to_shared(reinterpret_cast<char*>(row) + off);
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
          "[%3];" ::"r"(d),
          "l"(reinterpret_cast<const char*>(src) + off), "r"(n), "r"(b)
          : "memory");
    }
  }
  asm volatile(
      "{\n .reg .pred p;\n wait:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      " @!p bra wait;\n}\n" ::"r"(b)
      : "memory");
}

// One row a block, the row whole in shared memory; LayerNorm (g and b) or RMSNorm (g only).
template <int THREADS, bool BULK, bool LAST, bool LN>
__global__ void __launch_bounds__(THREADS)
    row_shared(const __half* X, const __half* G, const __half* B, __half* Y, int M, int N) {
  extern __shared__ uint4 row[];
  __shared__ float scratch[32];
  __shared__ alignas(8) unsigned long long bar;
  const int nv = N / 8;
  fetch_row<THREADS, BULK>(row, reinterpret_cast<const uint4*>(X + (size_t)blockIdx.x * N), nv,
                           &bar);
  float f[8], s = 0.f, q = 0.f;
  for (int v = threadIdx.x; v < nv; v += THREADS) {
    unpack(row[v], f);
    for (int i = 0; i < 8; ++i) {
      s += f[i];
      q = fmaf(f[i], f[i], q);
    }
  }
  if (LN) s = block_reduce<THREADS, false>(s, scratch);
  q = block_reduce<THREADS, false>(q, scratch);
  const float mean = LN ? s / N : 0.f;
  const float rstd = rsqrtf(q / N - mean * mean + 1e-5f);
  const uint4* g4 = reinterpret_cast<const uint4*>(G);
  const uint4* b4 = reinterpret_cast<const uint4*>(B);
  uint4* y = reinterpret_cast<uint4*>(Y + (size_t)blockIdx.x * N);
  for (int v = threadIdx.x; v < nv; v += THREADS) {
    float gf[8], bf[8];
    unpack(ld_column<LAST>(&g4[v]), gf);
    if (LN) unpack(ld_column<LAST>(&b4[v]), bf);
    unpack(row[v], f);
    for (int i = 0; i < 8; ++i) f[i] = (f[i] - mean) * rstd * gf[i] + (LN ? bf[i] : 0.f);
    y[v] = pack(f);
  }
}

// Variants of the register form that copy one habit of tessel's emitted code each (call F of
// 2026-11-29): kIeee: IEEE division and 1 / sqrtf for the statistics (tessel's rsqrt and div);
// kGuard: every 16-byte load a predicated asm with a fill word (tsl_ld_guarded16); kBranch: each
// store under a full-tile test with a predicated copy in the else branch; kPdl: griddepcontrol.wait
// first.
constexpr int kIeee = 1, kGuard = 2, kBranch = 4, kPdl = 8;
__device__ __forceinline__ uint4 ld_guarded(const void* p, bool ok) {
  uint4 u;
  asm volatile(
      "{\n .reg .pred g;\n setp.ne.b32 g, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n"
      " mov.b32 %2, 0;\n mov.b32 %3, 0;\n @g ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n}\n"
      : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
      : "l"(p), "r"(int(ok)));
  return u;
}

// 1024 threads, the row in registers (at most 4 vectors a thread: N <= 32768).
template <bool LAST, bool LN, int HABITS = 0>
__global__ void __launch_bounds__(1024)
    row_regs(const __half* X, const __half* G, const __half* B, __half* Y, int M, int N) {
  if (HABITS & kPdl) asm volatile("griddepcontrol.wait;" ::: "memory");
  __shared__ float scratch[32];
  const int nv = N / 8;
  const uint4* x4 = reinterpret_cast<const uint4*>(X + (size_t)blockIdx.x * N);
  uint4 r[4];
  for (int i = 0; i < 4; ++i) {
    const int v = threadIdx.x + i * 1024;
    if (HABITS & kGuard)
      r[i] = ld_guarded(&x4[v], v < nv);
    else
      r[i] = v < nv ? x4[v] : make_uint4(0, 0, 0, 0);
  }
  float f[8], s = 0.f, q = 0.f;
  for (int k = 0; k < 4; ++k) {
    unpack(r[k], f);
    for (int i = 0; i < 8; ++i) {
      s += f[i];
      q = fmaf(f[i], f[i], q);
    }
  }
  if (LN) s = block_reduce<1024, false>(s, scratch);
  q = block_reduce<1024, false>(q, scratch);
  float mean, rstd;
  if (HABITS & kIeee) {
    const float nf = float(N);
    mean = LN ? s / nf : 0.f;
    rstd = 1.0f / sqrtf(q / nf - mean * mean + 1e-5f);
  } else {
    mean = LN ? s / N : 0.f;
    rstd = rsqrtf(q / N - mean * mean + 1e-5f);
  }
  const uint4* g4 = reinterpret_cast<const uint4*>(G);
  const uint4* b4 = reinterpret_cast<const uint4*>(B);
  uint4* y = reinterpret_cast<uint4*>(Y + (size_t)blockIdx.x * N);
  for (int k = 0; k < 4; ++k) {
    const int v = threadIdx.x + k * 1024;
    if (!(HABITS & kGuard) && !(HABITS & kBranch) && v >= nv) break;
    float gf[8], bf[8];
    if (HABITS & kGuard) {
      unpack(ld_guarded(&g4[v], v < nv), gf);
      if (LN) unpack(ld_guarded(&b4[v], v < nv), bf);
    } else if (v < nv) {
      unpack(ld_column<LAST>(&g4[v]), gf);
      if (LN) unpack(ld_column<LAST>(&b4[v]), bf);
    }
    unpack(r[k], f);
    for (int i = 0; i < 8; ++i) f[i] = (f[i] - mean) * rstd * gf[i] + (LN ? bf[i] : 0.f);
    if (HABITS & kBranch) {
      if ((k + 1) * 8192 <= N) {
        y[v] = pack(f);
      } else if (v < nv) {
        y[v] = pack(f);
      }
    } else if (v < nv) {
      y[v] = pack(f);
    }
  }
}

using Kernel = void (*)(const __half*, const __half*, const __half*, __half*, int, int);
struct Variant {
  std::string name;
  bool ln;
  int threads;
  int max_per_sm;  // 0: as many as fit
  bool shared_row;
  Kernel fn;
};

// A norm's inputs: M x N random rows, a weight near 1 and a bias (host copies and device ones).
struct NormInputs {
  std::vector<__half> hx, hg, hb;
  __half *dx, *dg, *db;
  NormInputs(int M, int N, unsigned seed) {
    std::mt19937 rng(seed);
    hx = random_rows((size_t)M * N, rng);
    hg.resize(N);
    hb.resize(N);
    std::normal_distribution<float> nd(0.f, 2.f);
    for (auto& v : hg) v = __float2half(1.f + 0.25f * nd(rng));
    for (auto& v : hb) v = __float2half(0.5f * nd(rng));
    dx = to_device(hx);
    dg = to_device(hg);
    db = to_device(hb);
  }
  ~NormInputs() {
    cudaFree(dx);
    cudaFree(dg);
    cudaFree(db);
  }
};

// The relative error of LayerNorm (ln) or RMSNorm output dy against float64 on four rows.
inline double norm_rel_error(const NormInputs& in, const __half* dy, int M, int N, bool ln) {
  std::vector<__half> hy((size_t)M * N);
  CHECK_CUDA(cudaMemcpy(hy.data(), dy, hy.size() * 2, cudaMemcpyDeviceToHost));
  double err = 0, ref2 = 0;
  for (int r : {0, 1, M / 2, M - 1}) {
    const __half* x = &in.hx[(size_t)r * N];
    double s = 0, q = 0;
    for (int j = 0; j < N; ++j) {
      s += __half2float(x[j]);
      q += double(__half2float(x[j])) * __half2float(x[j]);
    }
    const double mean = ln ? s / N : 0.0;
    const double rstd = 1.0 / std::sqrt(q / N - mean * mean + 1e-5);
    for (int j = 0; j < N; ++j) {
      const double want = (__half2float(x[j]) - mean) * rstd * __half2float(in.hg[j]) +
                          (ln ? __half2float(in.hb[j]) : 0.0);
      const double d = double(__half2float(hy[(size_t)r * N + j])) - want;
      err += d * d;
      ref2 += want * want;
    }
  }
  return std::sqrt(err / ref2);
}

// rows_emitted_probe.cu includes this file for its kernels and helpers
// (ROWS_COLUMNS_PROBE_KERNELS_ONLY).
#ifndef ROWS_COLUMNS_PROBE_KERNELS_ONLY
int main(int argc, char** argv) {
  const int sms = print_device();
  std::vector<Variant> variants;
  for (bool ln : {true, false}) {
    const std::string k = ln ? "layernorm " : "rmsnorm ";
    auto add = [&](const std::string& n, int t, int b, bool sh, Kernel fn) {
      variants.push_back({k + n, ln, t, b, sh, fn});
    };
    if (ln) {
      add("cp 512", 512, 0, true, row_shared<512, false, false, true>);
      add("cp 512/2", 512, 2, true, row_shared<512, false, false, true>);
      add("cp+last 512/2", 512, 2, true, row_shared<512, false, true, true>);
      add("bulk 512", 512, 0, true, row_shared<512, true, false, true>);
      add("bulk 512/2", 512, 2, true, row_shared<512, true, false, true>);
      add("bulk+last 512/2", 512, 2, true, row_shared<512, true, true, true>);
      add("bulk 256", 256, 0, true, row_shared<256, true, false, true>);
      add("bulk 1024/1", 1024, 1, true, row_shared<1024, true, false, true>);
      add("regs 1024", 1024, 0, false, row_regs<false, true>);
      add("regs+last 1024", 1024, 0, false, row_regs<true, true>);
      add("regs ieee", 1024, 0, false, row_regs<false, true, kIeee>);
      add("regs guard", 1024, 0, false, row_regs<false, true, kGuard>);
      add("regs branch", 1024, 0, false, row_regs<false, true, kBranch>);
      add("regs pdl", 1024, 0, false, row_regs<false, true, kPdl>);
      add("regs all four", 1024, 0, false, row_regs<false, true, kIeee | kGuard | kBranch | kPdl>);
    } else {
      add("cp 512", 512, 0, true, row_shared<512, false, false, false>);
      add("cp 512/2", 512, 2, true, row_shared<512, false, false, false>);
      add("bulk 512", 512, 0, true, row_shared<512, true, false, false>);
      add("bulk 512/2", 512, 2, true, row_shared<512, true, false, false>);
      add("bulk+last 512/2", 512, 2, true, row_shared<512, true, true, false>);
      add("bulk 256", 256, 0, true, row_shared<256, true, false, false>);
      add("regs 1024", 1024, 0, false, row_regs<false, false>);
    }
  }
  // PROBE_ONLY=substring: only the variants whose name contains it.
  if (const char* only = getenv("PROBE_ONLY")) {
    std::vector<Variant> kept;
    for (const Variant& v : variants)
      if (v.name.find(only) != std::string::npos) kept.push_back(v);
    variants = kept;
  }
  for (int a = 1; a < argc; ++a) {
    int M, N;
    if (!parse_rows_shape(argv[a], 32768, M, N)) return 1;
    const size_t n = (size_t)M * N;
    const NormInputs in(M, N, a);
    const __half *dx = in.dx, *dg = in.dg, *db = in.db;
    __half* dy;
    CHECK_CUDA(cudaMalloc(&dy, n * 2));
    auto time = [&](auto launch) { return median_ms(launch); };
    auto copy = [&] { launch_copy16(dx, dy, n, sms); };
    for (const Variant& v : variants) {
      int smem = v.shared_row ? N * 2 : 0;
      if (v.max_per_sm) smem = std::max(smem, int(228 * 1024 / (v.max_per_sm + 1)) + 1024);
      CHECK_CUDA(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      int per_sm = 0;
      CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.fn, v.threads, smem));
      CHECK_CUDA(cudaMemset(dy, 0xff, n * 2));  // poisoned (NaN) output
      v.fn<<<M, v.threads, smem>>>(dx, dg, db, dy, M, N);
      CHECK_CUDA(cudaDeviceSynchronize());
      const double rel = norm_rel_error(in, dy, M, N, v.ln);
      // copy16 timed beside each variant (interleaved), the ratio of the two medians.
      const float copy_ms = time(copy);
      const float ms = time([&] { v.fn<<<M, v.threads, smem>>>(dx, dg, db, dy, M, N); });
      const float copy_ms2 = time(copy);
      const float c = std::min(copy_ms, copy_ms2);
      printf("%dx%d %-26s %d/SM %.4f ms copy %.4f  %.3f of copy  rel err %.2e %s\n", M, N,
             v.name.c_str(), per_sm, ms, c, c / ms, rel, rel < 2e-3 ? "ok" : "FAIL");
    }
    cudaFree(dy);
  }
  return 0;
}
#endif  // ROWS_COLUMNS_PROBE_KERNELS_ONLY
