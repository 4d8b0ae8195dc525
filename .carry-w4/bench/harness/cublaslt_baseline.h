// cuBLASLt with a fused bias + ReLU epilogue, the library baseline of GEMMs with that epilogue,
// loaded at run time like cuBLAS (cublas_baseline.h).
#pragma once

#include <cuda.h>

#include <memory>

#include "bench/harness/cublas_baseline.h"
#include "runtime/buffer.h"

namespace tessel::bench {

class CublasLtBiasRelu {
 public:
  // Loads libcublasLt and creates a handle. UserError when unavailable.
  CublasLtBiasRelu();
  ~CublasLtBiasRelu();
  CublasLtBiasRelu(const CublasLtBiasRelu&) = delete;
  CublasLtBiasRelu& operator=(const CublasLtBiasRelu&) = delete;

  // Picks the algorithm for this problem (descriptors and the heuristic's first choice), so that
  // run() is one cublasLtMatmul call. UserError when cuBLASLt offers none.
  void prepare(GemmElement element, int m, int n, int k);
  // C = relu(A·Bᵀ + bias) with A (M×K), B (N×K), C (M×N) row-major and bias [N], all in the
  // prepared element type; the epilogue in f32. Row-major C is column-major Cᵀ = B·Aᵀ, whose rows
  // are C's columns: the bias runs along them, as cuBLASLt's epilogue vector (one per row of D).
  void run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias, CUdeviceptr c, CUstream stream);

 private:
  struct Api;
  struct Plan;
  Api* api_ = nullptr;
  void* handle_ = nullptr;
  std::unique_ptr<Plan> plan_;
  runtime::DeviceBuffer workspace_;
};

}  // namespace tessel::bench
