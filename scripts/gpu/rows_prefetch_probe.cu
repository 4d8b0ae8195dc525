// Stand-alone probe (not product code): can a wide-row program reach a copy's rate on the H200 if
// the whole row is fetched into shared memory asynchronously (cp.async, no registers held), one
// row a block, or a block double-buffering rows (the next row in flight while this one is
// computed)? tessel's row programs read a row tile by tile, each tile's loads waiting for the
// previous tile's reductions: 0.87-0.94 of a copy at N = 32768 on the H200
// (bench/results/2026-11-28-rows-h200.md). Softmax and RMSNorm (no weight) over f16 rows, checked
// against float64 on sampled rows, timed against a 16-byte copy kernel in the same process
// (median of event timings).
//
//   nvcc -std=c++17 -O3 -arch=sm_90a scripts/gpu/rows_prefetch_probe.cu -o rows_prefetch_probe
//   ./rows_prefetch_probe MxN ...
#include "probe_common.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N));
}


// One row in shared memory (`row`, N / 8 vectors), computed and stored.
template <int THREADS, bool RMS>
__device__ __forceinline__ void compute_row(const uint4* row, uint4* y, int nv, float* scratch) {
  const float kLog2e = 1.4426950408889634f;
  float f[8];
  if (RMS) {
    float ss = 0.f;
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      unpack(row[v], f);
      for (int i = 0; i < 8; ++i) ss = fmaf(f[i], f[i], ss);
    }
    ss = block_reduce<THREADS, false>(ss, scratch);
    const float r = rsqrtf(ss / float(nv * 8) + 1e-6f);
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      unpack(row[v], f);
      for (int i = 0; i < 8; ++i) f[i] *= r;
      y[v] = pack(f);
    }
  } else {
    float m = -INFINITY;
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      unpack(row[v], f);
      for (int i = 0; i < 8; ++i) m = fmaxf(m, f[i]);
    }
    m = block_reduce<THREADS, true>(m, scratch);
    const float ms = m * kLog2e;
    float s = 0.f;
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      unpack(row[v], f);
      for (int i = 0; i < 8; ++i) s += exp2f(fmaf(f[i], kLog2e, -ms));
    }
    s = block_reduce<THREADS, false>(s, scratch);
    const float rs = 1.f / s;
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      unpack(row[v], f);
      for (int i = 0; i < 8; ++i) f[i] = exp2f(fmaf(f[i], kLog2e, -ms)) * rs;
      y[v] = pack(f);
    }
  }
}

// One row a block: the whole row fetched by cp.async, then computed.
template <int THREADS, bool RMS>
__global__ void __launch_bounds__(THREADS) row_whole(const __half* X, __half* Y, int M, int N) {
  extern __shared__ uint4 row[];
  __shared__ float scratch[32];
  const int nv = N / 8;
  const uint4* src = reinterpret_cast<const uint4*>(X + (size_t)blockIdx.x * N);
  for (int v = threadIdx.x; v < nv; v += THREADS) cp_async16(&row[v], &src[v]);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  compute_row<THREADS, RMS>(row, reinterpret_cast<uint4*>(Y + (size_t)blockIdx.x * N), nv,
                            scratch);
}

// Persistent: rows blockIdx.x, + gridDim.x, ...; the next row's fetch in flight while this one
// is computed (two row buffers).
template <int THREADS, bool RMS>
__global__ void __launch_bounds__(THREADS) row_double(const __half* X, __half* Y, int M, int N) {
  extern __shared__ uint4 rows2[];
  __shared__ float scratch[32];
  const int nv = N / 8;
  auto fetch = [&](int r, uint4* buf) {
    if (r < M) {
      const uint4* src = reinterpret_cast<const uint4*>(X + (size_t)r * N);
      for (int v = threadIdx.x; v < nv; v += THREADS) cp_async16(&buf[v], &src[v]);
    }
    cp_async_commit();
  };
  int i = 0;
  fetch(blockIdx.x, rows2);
  for (int r = blockIdx.x; r < M; r += gridDim.x, ++i) {
    uint4* cur = rows2 + (i & 1) * nv;
    uint4* next = rows2 + ((i + 1) & 1) * nv;
    fetch(r + gridDim.x, next);
    cp_async_wait<1>();
    __syncthreads();
    compute_row<THREADS, RMS>(cur, reinterpret_cast<uint4*>(Y + (size_t)r * N), nv, scratch);
    __syncthreads();  // cur is refilled two rows on
  }
  cp_async_wait<0>();
}

struct Variant {
  std::string name;
  bool rms;
  int threads;
  bool persistent;
  void (*fn)(const __half*, __half*, int, int);
};

int main(int argc, char** argv) {
  const int sms = print_device();
  std::vector<Variant> variants = {
      {"softmax whole 512", false, 512, false, row_whole<512, false>},
      {"softmax whole 256", false, 256, false, row_whole<256, false>},
      {"softmax double 512", false, 512, true, row_double<512, false>},
      {"softmax double 1024", false, 1024, true, row_double<1024, false>},
      {"rmsnorm whole 512", true, 512, false, row_whole<512, true>},
      {"rmsnorm whole 256", true, 256, false, row_whole<256, true>},
      {"rmsnorm double 512", true, 512, true, row_double<512, true>},
      {"rmsnorm double 1024", true, 1024, true, row_double<1024, true>},
  };
  for (int a = 1; a < argc; ++a) {
    int M, N;
    if (!parse_rows_shape(argv[a], 0, M, N)) return 1;
    const size_t n = (size_t)M * N;
    std::mt19937 rng(a);
    const std::vector<__half> hx = random_rows(n, rng);
    __half* dx = to_device(hx);
    __half* dy;
    CHECK_CUDA(cudaMalloc(&dy, n * 2));
    auto time = [&](auto launch) { return median_ms(launch); };
    const float copy_ms = time([&] { launch_copy16(dx, dy, n, sms); });
    printf("%dx%d copy16 %.4f ms %.0f GB/s\n", M, N, copy_ms, 2.0 * n * 2 / copy_ms / 1e6);
    for (const Variant& v : variants) {
      const int row_bytes = N * 2;
      const int smem = v.persistent ? 2 * row_bytes : row_bytes;
      if (smem > 227 * 1024) continue;
      CHECK_CUDA(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      int per_sm = 0;
      CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.fn, v.threads, smem));
      const int grid = v.persistent ? std::min(M, sms * per_sm) : M;
      CHECK_CUDA(cudaMemset(dy, 0xff, n * 2));  // poisoned (NaN) output
      v.fn<<<grid, v.threads, smem>>>(dx, dy, M, N);
      CHECK_CUDA(cudaDeviceSynchronize());
      std::vector<__half> hy(n);
      CHECK_CUDA(cudaMemcpy(hy.data(), dy, n * 2, cudaMemcpyDeviceToHost));
      double err = 0, ref2 = 0;
      for (int r : {0, 1, M / 2, M - 1}) {
        const __half* x = &hx[(size_t)r * N];
        std::vector<double> want(N);
        if (v.rms) {
          double ss = 0;
          for (int j = 0; j < N; ++j) ss += double(__half2float(x[j])) * __half2float(x[j]);
          const double rr = 1.0 / std::sqrt(ss / N + 1e-6);
          for (int j = 0; j < N; ++j) want[j] = __half2float(x[j]) * rr;
        } else {
          double mx = -INFINITY, s = 0;
          for (int j = 0; j < N; ++j) mx = std::max(mx, double(__half2float(x[j])));
          for (int j = 0; j < N; ++j) s += std::exp(__half2float(x[j]) - mx);
          for (int j = 0; j < N; ++j) want[j] = std::exp(__half2float(x[j]) - mx) / s;
        }
        for (int j = 0; j < N; ++j) {
          const double d = double(__half2float(hy[(size_t)r * N + j])) - want[j];
          err += d * d;
          ref2 += want[j] * want[j];
        }
      }
      const double rel = std::sqrt(err / ref2);
      const float ms = time([&] { v.fn<<<grid, v.threads, smem>>>(dx, dy, M, N); });
      printf("%dx%d %-22s grid %6d (%d/SM) %.4f ms  %.3f of copy  rel err %.2e %s\n", M, N,
             v.name.c_str(), grid, per_sm, ms, copy_ms / ms, rel, rel < 2e-3 ? "ok" : "FAIL");
    }
    cudaFree(dx);
    cudaFree(dy);
  }
  return 0;
}
