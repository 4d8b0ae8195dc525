// cuBLAS as the baseline of GEMM benchmarks, loaded at run time (like the driver) so that the tool
// needs no cuBLAS on machines without a GPU.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace tessel::bench {

enum class GemmElement { f16, bf16 };

// Grouped problems C_g = A_g B_g^T (row-major, A_g M_g x K, B_g N x K, C_g M_g x N): device arrays
// of the groups' pointers (one CUdeviceptr each) and the row counts on the host.
struct GroupedProblems {
  std::vector<int> m;
  int n = 0, k = 0;
  CUdeviceptr a_pointers = 0, b_pointers = 0, c_pointers = 0;
};
std::string to_string(GemmElement element);

class CublasBaseline {
 public:
  // Loads libcublas and creates a handle on tessel's primary context. UserError when unavailable.
  CublasBaseline();
  ~CublasBaseline();
  CublasBaseline(const CublasBaseline&) = delete;
  CublasBaseline& operator=(const CublasBaseline&) = delete;

  // C = A·Bᵀ with A (M×K), B (N×K), C (M×N) all row-major in `element`, f32 accumulation — the
  // same contract as tessel's GEMMs. Row-major C = A·Bᵀ is column-major Cᵀ = B·Aᵀ, so this calls
  // cublasGemmEx(transa = T, transb = N, m = N, n = M, k = K) on the column-major views.
  // With `f32_output`, C is f32 (the product before rounding: the reference of epilogue checks).
  void gemm_abt(GemmElement element, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n,
                int k, CUstream stream, bool f32_output = false);
  // C = A·B for any operand layout: A row-major [M,K] (`a_k_major`) or [K,M], B row-major [N,K]
  // (`b_k_major`: C = A·Bᵀ of the stored B, as gemm_abt) or [K,N]. C row-major M×N.
  void gemm(GemmElement element, CUdeviceptr a, bool a_k_major, CUdeviceptr b, bool b_k_major,
            CUdeviceptr c, int m, int n, int k, CUstream stream, bool f32_output = false);
  // `batch` such products at once (cublasGemmStridedBatchedEx): problem i reads A + i·M·K,
  // B + i·N·K and writes C + i·M·N (elements), each laid out as in gemm().
  void gemm_batched(GemmElement element, CUdeviceptr a, bool a_k_major, CUdeviceptr b,
                    bool b_k_major, CUdeviceptr c, int m, int n, int k, int batch, CUstream stream);
  // All groups in one call of cublasGemmGroupedBatchedEx (cuBLAS 12.5 on: has_grouped()).
  bool has_grouped() const;
  void gemm_grouped(GemmElement element, const GroupedProblems& problems, CUstream stream);

 private:
  struct Api;
  Api* api_ = nullptr;
  void* handle_ = nullptr;
};

}  // namespace tessel::bench
