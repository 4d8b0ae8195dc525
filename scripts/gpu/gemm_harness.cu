// Stand-alone nvcc harness for the reference GEMM kernel: correctness against cuBLAS and against a
// float64 host reference on sampled entries, and speed against cuBLAS in the same process.
// Used while iterating on the kernel on the device machine; the product path is
// tessel_reference (NVRTC) and `tessel bench gemm-reference`.
//
//   nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -I runtime/device -I bench/reference
//        scripts/gpu/gemm_harness.cu -lcuda -lcublas -o gemm_harness
//   ./gemm_harness [--check-only] [--iters N] [--group G] [--variant 1|2|3] MxNxK ...
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "reference_gemm_kernel.cu"
#include "check_cuda.cuh"

#define CHECK_CU(x)                                                 \
  do {                                                              \
    CUresult e = (x);                                               \
    if (e != CUDA_SUCCESS) {                                        \
      const char* s;                                                \
      cuGetErrorString(e, &s);                                      \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); \
      exit(1);                                                      \
    }                                                               \
  } while (0)
#define CHECK_CUBLAS(x)                                                         \
  do {                                                                          \
    cublasStatus_t e = (x);                                                     \
    if (e != CUBLAS_STATUS_SUCCESS) {                                           \
      fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, (int)e); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

using tessel::device::TmaDescriptor;

__global__ void fill_random(unsigned short* p, size_t n, unsigned long long seed, bool bf16) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 32;
    float v = ((x & 0xFFFFFF) / float(0x1000000)) * 2.0f - 1.0f;
    if (bf16) {
      unsigned u = __float_as_uint(v);
      u += 0x7FFF + ((u >> 16) & 1);
      p[i] = (unsigned short)(u >> 16);
    } else {
      p[i] = __half_as_ushort(__float2half_rn(v));
    }
  }
}

static double to_double(unsigned short h, bool bf16) {
  if (bf16) {
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  unsigned sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
  double v;
  if (exp == 0)
    v = std::ldexp((double)man, -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp((double)(man | 1024), (int)exp - 25);
  return sign ? -v : v;
}

static CUtensorMap make_map(void* ptr, uint64_t inner, uint64_t outer, uint32_t box_inner,
                            uint32_t box_outer, bool bf16) {
  CUtensorMap map;
  cuuint64_t dims[2] = {inner, outer};
  cuuint64_t strides[1] = {inner * 2};
  cuuint32_t box[2] = {box_inner, box_outer};
  cuuint32_t estrides[2] = {1, 1};
  CHECK_CU(cuTensorMapEncodeTiled(
      &map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, ptr, dims,
      strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

struct Options {
  bool check_only = false;
  int iters = 30;
  int group = 8;
  std::vector<int> variants = {1, 2, 3};
  std::vector<std::string> dtypes = {"f16", "bf16"};
};

static void launch(bool bf16, int variant_index, const CUtensorMap& ma, const CUtensorMap& mb,
                   const CUtensorMap& mc, unsigned short* c, int m, int n, int k, int group,
                   int sms, cudaStream_t s) {
  using namespace tessel_reference;
  const int variant = variant_index == 1 ? 1 : 2;  // the cluster size
  int tiles = ((m + kBlockM * variant - 1) / (kBlockM * variant)) * ((n + kBlockN - 1) / kBlockN);
  void (*kernel)(TmaDescriptor, TmaDescriptor, TmaDescriptor, unsigned short*, int, int, int, int);
  // variant 1: no cluster; 2: 2x1 cluster with B multicast; 3: as 2, epilogue overlapped with
  // the next tile's first K blocks.
  if (variant_index == 1)
    kernel = bf16 ? reference_gemm_bf16 : reference_gemm_f16;
  else if (variant_index == 2)
    kernel = bf16 ? reference_gemm_bf16_cluster2 : reference_gemm_f16_cluster2;
  else
    kernel = bf16 ? reference_gemm_bf16_cluster2_overlap : reference_gemm_f16_cluster2_overlap;
  static int max_clusters[2][4] = {};
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  if (!max_clusters[bf16][variant_index]) {
    CHECK_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    cfg.gridDim = dim3(sms / variant * variant);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = kSharedBytes;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = variant;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK_CUDA(cudaOccupancyMaxActiveClusters(&max_clusters[bf16][variant_index], kernel, &cfg));
    printf("# variant %d: max active clusters %d (SMs %d)\n", variant,
           max_clusters[bf16][variant_index], sms);
  }
  int clusters = std::min(tiles, max_clusters[bf16][variant_index]);
  cfg.gridDim = dim3(clusters * variant);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = kSharedBytes;
  cfg.stream = s;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = variant;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  TmaDescriptor da, db, dc;
  memcpy(&da, &ma, 128);
  memcpy(&db, &mb, 128);
  memcpy(&dc, &mc, 128);
  CHECK_CUDA(cudaLaunchKernelEx(&cfg, kernel, da, db, dc, n % 8 ? c : nullptr, m, n, k, group));
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::array<int, 3>> shapes;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check-only")
      opt.check_only = true;
    else if (a == "--iters")
      opt.iters = atoi(argv[++i]);
    else if (a == "--group")
      opt.group = atoi(argv[++i]);
    else if (a == "--variant")
      opt.variants = {atoi(argv[++i])};
    else if (a == "--dtype")
      opt.dtypes = {argv[++i]};
    else {
      std::array<int, 3> s;
      if (sscanf(a.c_str(), "%dx%dx%d", &s[0], &s[1], &s[2]) != 3) {
        fprintf(stderr, "bad shape %s\n", a.c_str());
        return 2;
      }
      shapes.push_back(s);
    }
  }
  CHECK_CUDA(cudaFree(0));
  int sms;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  std::mt19937_64 rng(12345);
  int failures = 0;
  printf("%-18s %-5s %-3s %9s %8s %9s %8s %6s %10s %10s\n", "shape", "dtype", "cl", "ms", "TFLOP/s",
         "cublas_ms", "TFLOP/s", "ratio", "err_cublas", "err_f64");
  for (auto& dt : opt.dtypes) {
    bool bf16 = dt == "bf16";
    for (auto& s : shapes) {
      int m = s[0], n = s[1], k = s[2];
      size_t na = (size_t)m * k, nb = (size_t)n * k, nc = (size_t)m * n;
      unsigned short *a, *b, *c, *cref;
      CHECK_CUDA(cudaMalloc(&a, na * 2));
      CHECK_CUDA(cudaMalloc(&b, nb * 2));
      CHECK_CUDA(cudaMalloc(&c, nc * 2));
      CHECK_CUDA(cudaMalloc(&cref, nc * 2));
      fill_random<<<1024, 256, 0, stream>>>(a, na, rng(), bf16);
      fill_random<<<1024, 256, 0, stream>>>(b, nb, rng(), bf16);
      CHECK_CUDA(cudaGetLastError());
      float alpha = 1, beta = 0;
      auto type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
      auto cublas = [&] {
        CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, b, type, k, a,
                                  type, k, &beta, cref, type, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
      };
      cublas();
      std::vector<unsigned short> ha(na), hb(nb), hc(nc), hr(nc);
      CHECK_CUDA(cudaMemcpyAsync(ha.data(), a, na * 2, cudaMemcpyDeviceToHost, stream));
      CHECK_CUDA(cudaMemcpyAsync(hb.data(), b, nb * 2, cudaMemcpyDeviceToHost, stream));
      CHECK_CUDA(cudaMemcpyAsync(hr.data(), cref, nc * 2, cudaMemcpyDeviceToHost, stream));
      CUtensorMap ma = make_map(a, k, m, 64, 128, bf16);
      CUtensorMap mc = {};
      if (n % 8 == 0) mc = make_map(c, n, m, 64, 64, bf16);
      for (int variant : opt.variants) {
        CUtensorMap mb = make_map(b, k, n, 64, variant == 1 ? 256 : 128, bf16);  // B box per CTA
        CHECK_CUDA(cudaMemsetAsync(c, 0xFF, nc * 2, stream));                    // NaN poison
        launch(bf16, variant, ma, mb, mc, c, m, n, k, opt.group, sms, stream);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaStreamSynchronize(stream));
        CHECK_CUDA(cudaMemcpy(hc.data(), c, nc * 2, cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (size_t i = 0; i < nc; ++i) {
          double x = to_double(hc[i], bf16), r = to_double(hr[i], bf16);
          num += (x - r) * (x - r);
          den += r * r;
        }
        double err_cublas = std::sqrt(num / den);
        // float64 reference on sampled entries (all of them for small outputs)
        double num64 = 0, den64 = 0;
        size_t samples = std::min<size_t>(nc, (size_t)20000);
        std::uniform_int_distribution<size_t> pick(0, nc - 1);
        for (size_t t = 0; t < samples; ++t) {
          size_t idx = samples == nc ? t : pick(rng);
          size_t i = idx / n, j = idx % n;
          double acc = 0;
          for (int p = 0; p < k; ++p)
            acc += to_double(ha[i * k + p], bf16) * to_double(hb[j * k + p], bf16);
          double x = to_double(hc[idx], bf16);
          num64 += (x - acc) * (x - acc);
          den64 += acc * acc;
        }
        double err64 = std::sqrt(num64 / std::max(den64, 1e-300));
        bool ok = std::isfinite(err_cublas) && std::isfinite(err64) &&
                  err64 < (bf16 ? 8e-3 : 2e-3) && err_cublas < (bf16 ? 1e-2 : 3e-3);
        if (!ok) ++failures;
        float ms = 0, cms = 0;
        if (!opt.check_only) {
          std::vector<float> t1, t2;
          for (int it = 0; it < opt.iters + 5; ++it) {
            CHECK_CUDA(cudaEventRecord(e0, stream));
            launch(bf16, variant, ma, mb, mc, c, m, n, k, opt.group, sms, stream);
            CHECK_CUDA(cudaEventRecord(e1, stream));
            CHECK_CUDA(cudaEventSynchronize(e1));
            float x;
            CHECK_CUDA(cudaEventElapsedTime(&x, e0, e1));
            if (it >= 5) t1.push_back(x);
            CHECK_CUDA(cudaEventRecord(e0, stream));
            cublas();
            CHECK_CUDA(cudaEventRecord(e1, stream));
            CHECK_CUDA(cudaEventSynchronize(e1));
            CHECK_CUDA(cudaEventElapsedTime(&x, e0, e1));
            if (it >= 5) t2.push_back(x);
          }
          ms = median(t1);
          cms = median(t2);
        }
        double flop = 2.0 * m * n * k;
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d", m, n, k);
        printf("%-18s %-5s %-3d %9.4f %8.1f %9.4f %8.1f %6.3f %10.2e %10.2e %s\n", shape,
               dt.c_str(), variant, ms, ms ? flop / ms / 1e9 : 0, cms, cms ? flop / cms / 1e9 : 0,
               ms ? cms / ms : 0, err_cublas, err64, ok ? "ok" : "FAIL");
        fflush(stdout);
      }
      cudaFree(a);
      cudaFree(b);
      cudaFree(c);
      cudaFree(cref);
    }
  }
  printf("failures: %d\n", failures);
  return failures ? 1 : 0;
}
