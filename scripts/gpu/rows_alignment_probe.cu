// Stand-alone probe (not product code): what a row program's loads cost when its rows are not a
// multiple of 128 bytes long, and which load pattern avoids it. tessel's row programs lose 3-9%
// at N = 32760 / 16376 / 8200 against N = 32768 / 16384 / 8192, and ncu shows the misaligned
// rows read 1.5x their sectors from L2 (bench/results/2026-11-29-rows-misaligned-h200.md).
// RMSNorm over f16 rows (one row a block, the row fetched whole into shared memory, then
// normalized from there and stored lane by lane, as tessel's fetched-whole form does), the row
// fetched three ways:
//   lanes    every thread's 16-byte cp.async's at the row's own start (tessel's form today)
//   aligned  the same from the row's start rounded down to 128 bytes, so that every warp's 512
//            bytes cover four whole lines (the few bytes before the row are fetched and ignored)
//   bulk     one cp.async.bulk of the whole row by one thread, completing an mbarrier's bytes
// and the row in registers (`regs`: 16-byte loads lane by lane, no shared memory) for reference.
// Checked against float64 on sampled rows, timed against a 16-byte copy kernel in the same
// process (median of event timings); run it under ncu for the L2 sectors.
//
//   nvcc -std=c++17 -O3 -arch=sm_90a scripts/gpu/rows_alignment_probe.cu -o rows_alignment_probe
//   ./rows_alignment_probe MxN ...
#include "probe_common.cuh"

#include <cstdint>
#include <random>
#include <string>

enum class Fetch { lanes, aligned, bulk };

template <int THREADS, Fetch F>
__global__ void __launch_bounds__(THREADS) rms_smem(const __half* x, __half* y, int M, int N) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float scratch[32];
  __shared__ __align__(8) unsigned long long bar;
  const int row = blockIdx.x;
  const __half* xr = x + (size_t)row * N;
  const int nv = N / 8;
  const uint4* srow;  // the row's first vector in shared memory
  if (F == Fetch::lanes) {
    for (int v = threadIdx.x; v < nv; v += THREADS) {
      unsigned s = (unsigned)__cvta_generic_to_shared(smem + 16 * v);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(xr + 8 * v));
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    srow = reinterpret_cast<const uint4*>(smem);
  } else if (F == Fetch::aligned) {
    const uintptr_t start = reinterpret_cast<uintptr_t>(xr);
    const uintptr_t base = start & ~uintptr_t(127);
    const int head = static_cast<int>(start - base);  // bytes, a multiple of 16
    const int vectors = (head + 2 * N) / 16;
    for (int v = threadIdx.x; v < vectors; v += THREADS) {
      unsigned s = (unsigned)__cvta_generic_to_shared(smem + 16 * v);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s),
                   "l"(reinterpret_cast<const void*>(base + 16 * v)));
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    srow = reinterpret_cast<const uint4*>(smem + head);
  } else {
    const unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned bytes = 2u * N;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes)
                   : "memory");
      unsigned s = (unsigned)__cvta_generic_to_shared(smem);
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
          ::"r"(s), "l"(xr), "r"(bytes), "r"(b)
          : "memory");
    }
    asm volatile(
        "{\n .reg .pred p;\n wait:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
        " @!p bra wait;\n}" ::"r"(b)
        : "memory");
    srow = reinterpret_cast<const uint4*>(smem);
  }
  float f[8];
  float ss = 0.f;
  for (int v = threadIdx.x; v < nv; v += THREADS) {
    unpack(srow[v], f);
    for (int i = 0; i < 8; ++i) ss = fmaf(f[i], f[i], ss);
  }
  ss = block_reduce<THREADS, false>(ss, scratch);
  const float r = rsqrtf(ss / float(N) + 1e-6f);
  uint4* yr = reinterpret_cast<uint4*>(y + (size_t)row * N);
  for (int v = threadIdx.x; v < nv; v += THREADS) {
    unpack(srow[v], f);
    for (int i = 0; i < 8; ++i) f[i] *= r;
    yr[v] = pack(f);
  }
}

// The row in registers: VECS 16-byte vectors a thread, lane by lane.
template <int THREADS, int VECS>
__global__ void __launch_bounds__(THREADS) rms_regs(const __half* x, __half* y, int M, int N) {
  __shared__ float scratch[32];
  const int row = blockIdx.x;
  const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)row * N);
  const int nv = N / 8;
  uint4 held[VECS];
  for (int i = 0; i < VECS; ++i) {
    const int v = threadIdx.x + i * THREADS;
    held[i] = v < nv ? xr[v] : make_uint4(0, 0, 0, 0);
  }
  float f[8];
  float ss = 0.f;
  for (int i = 0; i < VECS; ++i) {
    unpack(held[i], f);
    for (int j = 0; j < 8; ++j) ss = fmaf(f[j], f[j], ss);
  }
  ss = block_reduce<THREADS, false>(ss, scratch);
  const float r = rsqrtf(ss / float(N) + 1e-6f);
  uint4* yr = reinterpret_cast<uint4*>(y + (size_t)row * N);
  for (int i = 0; i < VECS; ++i) {
    const int v = threadIdx.x + i * THREADS;
    if (v >= nv) continue;
    unpack(held[i], f);
    for (int j = 0; j < 8; ++j) f[j] *= r;
    yr[v] = pack(f);
  }
}

struct Variant {
  std::string name;
  int threads;
  bool shared;  // the row in shared memory (N * 2 bytes, + 128 for `aligned`)
  void (*fn)(const __half*, __half*, int, int);
};

int main(int argc, char** argv) {
  const int sms = print_device();
  const std::vector<Variant> variants = {
      {"smem lanes 512", 512, true, rms_smem<512, Fetch::lanes>},
      {"smem aligned 512", 512, true, rms_smem<512, Fetch::aligned>},
      {"smem bulk 512", 512, true, rms_smem<512, Fetch::bulk>},
      {"regs 1024x4", 1024, false, rms_regs<1024, 4>},
      {"regs 512x4", 512, false, rms_regs<512, 4>},
  };
  const char* only = std::getenv("VARIANT");  // one variant (for ncu), by name
  for (int a = 1; a < argc; ++a) {
    int M, N;
    if (!parse_rows_shape(argv[a], 32768, M, N)) return 1;
    const size_t n = (size_t)M * N;
    std::mt19937 rng(a);
    const std::vector<__half> hx = random_rows(n, rng);
    __half* dx = to_device(hx);
    __half* dy;
    CHECK_CUDA(cudaMalloc(&dy, n * 2));
    if (!only) {
      const float copy_ms = median_ms([&] { launch_copy16(dx, dy, n, sms); });
      printf("%dx%d copy16 %.4f ms %.0f GB/s\n", M, N, copy_ms, 2.0 * n * 2 / copy_ms / 1e6);
    }
    for (const Variant& v : variants) {
      if (only && v.name != only) continue;
      if (!v.shared && N > v.threads * 4 * 8) continue;  // the row does not fit its registers
      const int smem = v.shared ? 2 * N + 128 : 0;
      CHECK_CUDA(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      CHECK_CUDA(cudaMemset(dy, 0xff, n * 2));  // poisoned (NaN) output
      v.fn<<<M, v.threads, smem>>>(dx, dy, M, N);
      CHECK_CUDA(cudaDeviceSynchronize());
      std::vector<__half> hy(n);
      CHECK_CUDA(cudaMemcpy(hy.data(), dy, n * 2, cudaMemcpyDeviceToHost));
      double err = 0, ref2 = 0;
      for (int r : {0, 1, M / 2, M - 1}) {
        const __half* xr = &hx[(size_t)r * N];
        double ss = 0;
        for (int j = 0; j < N; ++j) ss += double(__half2float(xr[j])) * __half2float(xr[j]);
        const double rr = 1.0 / std::sqrt(ss / N + 1e-6);
        for (int j = 0; j < N; ++j) {
          const double want = __half2float(xr[j]) * rr;
          const double d = double(__half2float(hy[(size_t)r * N + j])) - want;
          err += d * d;
          ref2 += want * want;
        }
      }
      const double rel = std::sqrt(err / ref2);
      if (only) {
        printf("%dx%d %s rel err %.2e %s\n", M, N, v.name.c_str(), rel, rel < 2e-3 ? "ok" : "FAIL");
        continue;
      }
      const float ms = median_ms([&] { v.fn<<<M, v.threads, smem>>>(dx, dy, M, N); });
      const float copy_ms = median_ms([&] { launch_copy16(dx, dy, n, sms); });
      printf("%dx%d %-18s %.4f ms  %.3f of copy  rel err %.2e %s\n", M, N, v.name.c_str(), ms,
             copy_ms / ms, rel, rel < 2e-3 ? "ok" : "FAIL");
    }
    cudaFree(dx);
    cudaFree(dy);
  }
  return 0;
}
