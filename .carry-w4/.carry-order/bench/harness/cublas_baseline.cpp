#include "bench/harness/cublas_baseline.h"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <vector>

#include "runtime/context.h"
#include "support/diagnostics.h"

namespace tessel::bench {

std::string to_string(GemmElement element) {
  return element == GemmElement::f16 ? "f16" : "bf16";
}

struct CublasBaseline::Api {
  using Create = cublasStatus_t (*)(cublasHandle_t*);
  using Destroy = cublasStatus_t (*)(cublasHandle_t);
  using SetStream = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                  cublasOperation_t, int, int, int, const void*,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, void*, cudaDataType, int, long long,
                                                  int, cublasComputeType_t, cublasGemmAlgo_t);
  using GemmGroupedBatchedEx = cublasStatus_t (*)(cublasHandle_t, const cublasOperation_t*,
                                                  const cublasOperation_t*, const int*, const int*,
                                                  const int*, const void*, const void* const*,
                                                  cudaDataType_t, const int*, const void* const*,
                                                  cudaDataType_t, const int*, const void*,
                                                  void* const*, cudaDataType_t, const int*, int,
                                                  const int*, cublasComputeType_t);
  Create create = nullptr;
  Destroy destroy = nullptr;
  SetStream set_stream = nullptr;
  GemmEx gemm_ex = nullptr;
  GemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
  GemmGroupedBatchedEx gemm_grouped_batched_ex = nullptr;  // cuBLAS 12.5 on; null before
};

namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    user_error(SourceLocation::unknown(), what, " failed with cuBLAS status ",
               static_cast<int>(status));
  }
}

}  // namespace

CublasBaseline::CublasBaseline() {
  runtime::context();  // cuBLAS attaches to the current (primary) context
  void* library = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    user_error(SourceLocation::unknown(),
               "cuBLAS (libcublas.so.13) could not be loaded: ", dlerror());
  }
  api_ = new Api();
  auto resolve = [&](const char* name) {
    void* symbol = dlsym(library, name);
    if (symbol == nullptr) user_error(SourceLocation::unknown(), "cuBLAS lacks ", name);
    return symbol;
  };
  api_->create = reinterpret_cast<Api::Create>(resolve("cublasCreate_v2"));
  api_->destroy = reinterpret_cast<Api::Destroy>(resolve("cublasDestroy_v2"));
  api_->set_stream = reinterpret_cast<Api::SetStream>(resolve("cublasSetStream_v2"));
  api_->gemm_ex = reinterpret_cast<Api::GemmEx>(resolve("cublasGemmEx"));
  api_->gemm_strided_batched_ex =
      reinterpret_cast<Api::GemmStridedBatchedEx>(resolve("cublasGemmStridedBatchedEx"));
  api_->gemm_grouped_batched_ex =
      reinterpret_cast<Api::GemmGroupedBatchedEx>(dlsym(library, "cublasGemmGroupedBatchedEx"));
  cublasHandle_t handle = nullptr;
  check_cublas(api_->create(&handle), "cublasCreate");
  handle_ = handle;
}

CublasBaseline::~CublasBaseline() {
  if (handle_ != nullptr) api_->destroy(static_cast<cublasHandle_t>(handle_));
  delete api_;
}

void CublasBaseline::gemm_abt(GemmElement element, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                              int m, int n, int k, CUstream stream, bool f32_output) {
  gemm(element, a, true, b, true, c, m, n, k, stream, f32_output);
}

void CublasBaseline::gemm(GemmElement element, CUdeviceptr a, bool a_k_major, CUdeviceptr b,
                          bool b_k_major, CUdeviceptr c, int m, int n, int k, CUstream stream,
                          bool f32_output) {
  auto handle = static_cast<cublasHandle_t>(handle_);
  check_cublas(api_->set_stream(handle, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  cudaDataType type = element == GemmElement::f16 ? CUDA_R_16F : CUDA_R_16BF;
  float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A·B is column-major Cᵀ (N×M) = Bᵀ·Aᵀ. The column-major view of a row-major
  // [N,K] B is the K×N matrix whose transpose is Bᵀ (op T, ld K); of a row-major [K,N] B, the N×K
  // matrix Bᵀ itself (op N, ld N). Likewise A: row-major [M,K] viewed column-major is Aᵀ (op N,
  // ld K); row-major [K,M] is the M×K matrix A (op T, ld M).
  check_cublas(api_->gemm_ex(handle, b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N,
                             a_k_major ? CUBLAS_OP_N : CUBLAS_OP_T, n, m, k, &alpha,
                             reinterpret_cast<const void*>(b), type, b_k_major ? k : n,
                             reinterpret_cast<const void*>(a), type, a_k_major ? k : m, &beta,
                             reinterpret_cast<void*>(c), f32_output ? CUDA_R_32F : type, n,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

void CublasBaseline::gemm_batched(GemmElement element, CUdeviceptr a, bool a_k_major, CUdeviceptr b,
                                  bool b_k_major, CUdeviceptr c, int m, int n, int k, int batch,
                                  CUstream stream) {
  auto handle = static_cast<cublasHandle_t>(handle_);
  check_cublas(api_->set_stream(handle, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  cudaDataType type = element == GemmElement::f16 ? CUDA_R_16F : CUDA_R_16BF;
  float alpha = 1.0f, beta = 0.0f;
  // The column-major views of gemm(), with a stride between problems.
  check_cublas(
      api_->gemm_strided_batched_ex(
          handle, b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N, a_k_major ? CUBLAS_OP_N : CUBLAS_OP_T, n,
          m, k, &alpha, reinterpret_cast<const void*>(b), type, b_k_major ? k : n,
          static_cast<long long>(n) * k, reinterpret_cast<const void*>(a), type, a_k_major ? k : m,
          static_cast<long long>(m) * k, &beta, reinterpret_cast<void*>(c), type, n,
          static_cast<long long>(m) * n, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

bool CublasBaseline::has_grouped() const {
  return api_->gemm_grouped_batched_ex != nullptr;
}

void CublasBaseline::gemm_grouped(GemmElement element, const GroupedProblems& p, CUstream stream) {
  if (!has_grouped())
    user_error(SourceLocation::unknown(), "cuBLAS lacks cublasGemmGroupedBatchedEx");
  auto handle = static_cast<cublasHandle_t>(handle_);
  check_cublas(api_->set_stream(handle, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  cudaDataType type = element == GemmElement::f16 ? CUDA_R_16F : CUDA_R_16BF;
  const int groups = static_cast<int>(p.m.size());
  // Each group one problem: row-major C_g = A_g B_g^T is column-major C_g^T (N x M_g) =
  // B_g^T' (op T, ld K) A_g^T (op N, ld K), as gemm() calls it.
  std::vector<cublasOperation_t> ta(groups, CUBLAS_OP_T), tb(groups, CUBLAS_OP_N);
  std::vector<int> n(groups, p.n), k(groups, p.k), ld_k(groups, p.k), ld_n(groups, p.n),
      one(groups, 1);
  std::vector<float> alpha(groups, 1.0f), beta(groups, 0.0f);
  check_cublas(api_->gemm_grouped_batched_ex(
                   handle, ta.data(), tb.data(), n.data(), p.m.data(), k.data(), alpha.data(),
                   reinterpret_cast<const void* const*>(p.b_pointers), type, ld_k.data(),
                   reinterpret_cast<const void* const*>(p.a_pointers), type, ld_k.data(),
                   beta.data(), reinterpret_cast<void* const*>(p.c_pointers), type, ld_n.data(),
                   groups, one.data(), CUBLAS_COMPUTE_32F),
               "cublasGemmGroupedBatchedEx");
}

}  // namespace tessel::bench
