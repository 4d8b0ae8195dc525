// Shared by the stand-alone row probes (rows_prefetch_probe.cu, rows_columns_probe.cu; not product
// code): the 16-byte copy kernel they are timed against, f16 vector (un)packing, a block
// reduction, and the median of event timings; CHECK_CUDA from check_cuda.cuh.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_cuda.cuh"

__global__ void copy16(const uint4* __restrict__ x, uint4* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    y[i] = x[i];
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
