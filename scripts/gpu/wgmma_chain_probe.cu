// How long does a group of 16 wgmma.m64nNk16 in RS form (A in registers, B a K-major 128B-swizzled
// shared tile, as the W4A16 small-M consumer issues them a K tile) take from its first issue to
// the end of its wait, when its k steps chain through one accumulator, or alternate over C
// accumulators (independent chains the tensor pipe may overlap)? (not product code; seventeenth
// session, 2026-11-29.) Each warpgroup of a block runs ITER groups back to back (fence, 16
// wgmmas, commit, wait 0) and times them with clock64; W warpgroups a block share one SM's tensor
// cores, as the kernel's 3 consumer roles do. Prints cycles a group (median over the SMs' blocks).
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iruntime/device \
//     scripts/gpu/wgmma_chain_probe.cu -o wgmma_chain_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tessel_device.cuh"

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));             \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

constexpr int kIter = 2000;

template <int N, int C>
__global__ void __launch_bounds__(384) chain(float* out, long long* cycles) {
  using namespace tessel::device;
  extern __shared__ __align__(1024) unsigned char smem[];
  const int tid = threadIdx.x;
  for (int i = tid; i < 32768 / 4; i += blockDim.x)
    reinterpret_cast<unsigned*>(smem)[i] = 0x3c003c00u * ((i & 7) == 0);
  __syncthreads();
  // B: N rows (tokens) x 256 columns (k) f16, 128B swizzle: two 64-column atoms of N x 128 bytes
  // per 128 columns, as the kernel's X slot (its k-step offsets: 2 units a step, 64 an atom).
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const SmemDescriptor desc(make_smem_descriptor_k_major(base, SmemSwizzle::b128));
  unsigned a[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[j][r] = 0x3c003c00u ^ (tid * 16 + j * 4 + r);
  float acc[C][N / 2];
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int v = 0; v < N / 2; ++v) acc[c][v] = 0.f;
  float sum = 0.f;
  long long start = clock64();
#pragma unroll 1
  for (int it = 0; it < kIter; ++it) {
    // A made anew every group, as the kernel's unpacking does (and so ptxas needs no extra
    // warpgroup.arrive between the wgmmas for registers live across the loop): 64 LOP3s.
    unsigned a_it[16][4];
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) a_it[j][r] = a[j][r] ^ (static_cast<unsigned>(it) & 0x00010001u);
#pragma unroll
    for (int c = 0; c < C; ++c) wgmma_fence_operand(acc[c]);
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int unit = (j & 3) * 2 + (j >> 2) * N * 8;  // 32 B a k step, N x 128 B an atom
      wgmma_rs<N, MmaType::f16, 0>(acc[j % C], a_it[j], desc + unit, j >= C ? 1 : 0);
    }
    wgmma_commit_group();
    wgmma_wait_group<0>();
#pragma unroll
    for (int c = 0; c < C; ++c) wgmma_fence_operand(acc[c]);
#pragma unroll
    for (int c = 0; c < C; ++c) sum += acc[c][0];
  }
  long long stop = clock64();
  out[blockIdx.x * blockDim.x + tid] = sum;
  if (tid % 128 == 0) cycles[blockIdx.x * 3 + tid / 128] = stop - start;
}

// The same groups (N = 8, one chain) with R rounds of ALU work on the A registers before each
// (a funnel shift and a xor on each of the 64 words a round: 128 instructions), A in registers
// (RS) or, SS, stored to shared memory first (16 st.shared.v4 a thread, a proxy fence and the
// warpgroup's named barrier), the wgmmas then reading A through a descriptor: does the tensor work
// overlap the ALU work of the other warpgroups, and does A from shared memory change that?
template <int R, bool SS>
__global__ void __launch_bounds__(384) alu_and_mma(float* out, long long* cycles) {
  using namespace tessel::device;
  constexpr int N = 8;
  extern __shared__ __align__(1024) unsigned char smem[];
  const int tid = threadIdx.x, wg = tid / 128;
  for (int i = tid; i < 32768 / 4; i += blockDim.x)
    reinterpret_cast<unsigned*>(smem)[i] = 0x3c003c00u * ((i & 7) == 0);
  __syncthreads();
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const SmemDescriptor desc(make_smem_descriptor_k_major(base, SmemSwizzle::b128));
  // Each warpgroup's A tile: 64 rows x 256 columns f16 (32 KiB) after the 4 KiB of B.
  unsigned char* a_tile = smem + 4096 + 32768 * wg;
  const unsigned a_base = static_cast<unsigned>(__cvta_generic_to_shared(a_tile));
  const SmemDescriptor desc_a(make_smem_descriptor_k_major(a_base, SmemSwizzle::b128));
  unsigned a[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[j][r] = 0x3c003c00u ^ ((tid & 127) * 16 + j * 4 + r);
  float acc[N / 2];
#pragma unroll
  for (int v = 0; v < N / 2; ++v) acc[v] = 0.f;
  float sum = 0.f;
  long long start = clock64();
#pragma unroll 1
  for (int it = 0; it < kIter; ++it) {
    unsigned a_it[16][4];
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) a_it[j][r] = a[j][r] ^ (static_cast<unsigned>(it) & 0x00010001u);
#pragma unroll
    for (int round = 0; round < R; ++round)
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a_it[j][r] = __funnelshift_l(a_it[j][r], a_it[j][r], 3 + round) ^ static_cast<unsigned>(it);
    if constexpr (SS) {
      uint4* dst = reinterpret_cast<uint4*>(a_tile) + (tid & 127);
#pragma unroll
      for (int j = 0; j < 16; ++j)
        dst[j * 128] = make_uint4(a_it[j][0], a_it[j][1], a_it[j][2], a_it[j][3]);
      fence_proxy_async_shared();
      named_barrier_sync(1 + wg, 128);
    }
    wgmma_fence_operand(acc);
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int unit = (j & 3) * 2 + (j >> 2) * N * 8;
      if constexpr (SS) {
        wgmma_ss<N, MmaType::f16>(acc, desc_a + ((j & 3) * 2 + (j >> 2) * 64 * 8), desc + unit,
                                  j >= 1 ? 1 : 0);
      } else {
        wgmma_rs<N, MmaType::f16, 0>(acc, a_it[j], desc + unit, j >= 1 ? 1 : 0);
      }
    }
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operand(acc);
    sum += acc[0];
    if constexpr (SS) named_barrier_sync(1 + wg, 128);  // the tile is free for the next stores
  }
  long long stop = clock64();
  out[blockIdx.x * blockDim.x + tid] = sum;
  if (tid % 128 == 0) cycles[blockIdx.x * 3 + tid / 128] = stop - start;
}

// Launches `kernel` (a warm-up, then the timed launch) on every SM with `warpgroups` warpgroups
// a block and `smem` bytes of dynamic shared memory: the median over the warpgroups of cycles a
// group, or -1 on an error.
template <typename Kernel>
double median_cycles(Kernel kernel, int sms, int warpgroups, int smem) {
  float* out;
  long long* cycles;
  if (cudaMalloc(&out, sizeof(float) * sms * 384) != cudaSuccess ||
      cudaMalloc(&cycles, sizeof(long long) * sms * 3) != cudaSuccess ||
      cudaMemset(cycles, 0, sizeof(long long) * sms * 3) != cudaSuccess ||
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
    return -1;
  kernel<<<sms, 128 * warpgroups, smem>>>(out, cycles);
  kernel<<<sms, 128 * warpgroups, smem>>>(out, cycles);
  std::vector<long long> h(sms * 3);
  if (cudaDeviceSynchronize() != cudaSuccess ||
      cudaMemcpy(h.data(), cycles, sizeof(long long) * sms * 3, cudaMemcpyDeviceToHost) != cudaSuccess)
    return -1;
  std::vector<long long> v;
  for (int b = 0; b < sms; ++b)
    for (int w = 0; w < warpgroups; ++w) v.push_back(h[b * 3 + w]);
  std::sort(v.begin(), v.end());
  cudaFree(out);
  cudaFree(cycles);
  return double(v[v.size() / 2]) / kIter;
}

template <int R, bool SS>
void run_alu(int sms, int warpgroups) {
  const double c = median_cycles(alu_and_mma<R, SS>, sms, warpgroups, 4096 + 32768 * 3);
  printf("%s, %d ALU round(s) (%3d instructions), %d warpgroup(s) an SM: %7.1f cycles a group\n",
         SS ? "SS (A stored to shared)" : "RS (A in registers)   ", R, 64 + 128 * R, warpgroups, c);
}

template <int N, int C>
void run(int sms, int warpgroups) {
  const double c = median_cycles(chain<N, C>, sms, warpgroups, 32768);
  printf("N = %2d, %2d chain(s), %d warpgroup(s) an SM: %7.1f cycles a group of 16 wgmmas (%.1f a wgmma)\n",
         N, C, warpgroups, c, c / 16);
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int w : {1, 3}) {
    run<8, 1>(sms, w);
    run<8, 2>(sms, w);
    run<8, 4>(sms, w);
    run<8, 8>(sms, w);
    run<8, 16>(sms, w);
    run<16, 1>(sms, w);
    run<16, 4>(sms, w);
    run<64, 1>(sms, w);
  }
  for (int w : {1, 3}) {
    run_alu<0, false>(sms, w);
    run_alu<1, false>(sms, w);
    run_alu<2, false>(sms, w);
    run_alu<0, true>(sms, w);
    run_alu<1, true>(sms, w);
    run_alu<2, true>(sms, w);
  }
  return 0;
}
