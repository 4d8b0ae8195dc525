// Shared by the stand-alone probes (rows_prefetch_probe.cu, rows_columns_probe.cu,
// rows_alignment_probe.cu, rows_emitted_probe.cu, copy_data_probe.cu; not product code): the
// device line, the 16-byte copy kernels they are timed against (the probes' and the bench's) and
// a launch, f16 vector (un)packing, a block reduction, the median of event timings, the shapes
// they take, their random rows and a device copy of them; CHECK_CUDA from check_cuda.cuh.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "check_cuda.cuh"

// The device's name and SM count on one line; the SM count.
inline int print_device() {
  int sms = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs\n", prop.name, sms);
  return sms;
}

__global__ void copy16(const uint4* __restrict__ x, uint4* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}

// copy16 over n halves (a multiple of 8) of x into y, 8 blocks of 512 threads a SM.
inline void launch_copy16(const __half* x, __half* y, size_t n, int sms) {
  copy16<<<sms * 8, 512>>>(reinterpret_cast<const uint4*>(x), reinterpret_cast<uint4*>(y), n / 8);
}

// The bench's baseline (bench/harness/memory_bench.cpp's copy16): 256 threads, launched 8 blocks
// a SM, n 16-byte words.
__global__ void __launch_bounds__(256) copy16_bench(const uint4* __restrict__ src,
                                                    uint4* __restrict__ dst, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x)
    dst[i] = src[i];
}

// An "MxN" argument: N a multiple of 8 (16-byte vectors), at most max_n when max_n > 0; false,
// after a message, for anything else.
inline bool parse_rows_shape(const char* arg, int max_n, int& M, int& N) {
  M = N = 0;
  if (sscanf(arg, "%dx%d", &M, &N) == 2 && M > 0 && N > 0 && N % 8 == 0 &&
      (max_n <= 0 || N <= max_n))
    return true;
  if (max_n > 0)
    fprintf(stderr, "bad shape %s (MxN, N a multiple of 8, at most %d)\n", arg, max_n);
  else
    fprintf(stderr, "bad shape %s (MxN, N a multiple of 8)\n", arg);
  return false;
}

// n halves drawn from N(0, 2) by `rng` (the probes' rows).
inline std::vector<__half> random_rows(size_t n, std::mt19937& rng) {
  std::vector<__half> h(n);
  std::normal_distribution<float> nd(0.f, 2.f);
  for (auto& v : h) v = __float2half(nd(rng));
  return h;
}

// A device copy of `h`.
inline __half* to_device(const std::vector<__half>& h) {
  __half* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, h.size() * 2));
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  return d;
}

__device__ __forceinline__ void unpack(uint4 u, float* f) {
  const __half2* h = reinterpret_cast<const __half2*>(&u);
  for (int i = 0; i < 4; ++i) {
    float2 p = __half22float2(h[i]);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}
__device__ __forceinline__ uint4 pack(const float* f) {
  uint4 u;
  __half2* h = reinterpret_cast<__half2*>(&u);
  for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
  return u;
}

// Block reductions through `scratch` (32 floats); every thread gets the result.
template <int THREADS, bool MAX>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  for (int o = 16; o; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch free (an earlier reduction's readers are done)
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < THREADS / 32 ? scratch[lane] : (MAX ? -INFINITY : 0.f);
  for (int o = 16; o; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  return v;
}

// The median of 30 event timings of `launch` (after 3 warm-up launches), in ms.
template <typename Launch>
float median_ms(Launch launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int w = 0; w < 3; ++w) launch();
  std::vector<float> ms;
  for (int it = 0; it < 30; ++it) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  CHECK_CUDA(cudaGetLastError());
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
