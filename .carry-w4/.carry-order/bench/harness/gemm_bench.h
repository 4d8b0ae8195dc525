// The GEMM benchmark: a tessel kernel against cuBLAS on the same random inputs, in one process.
#pragma once

#include <cuda.h>

#include <functional>
#include <string>
#include <vector>

#include "bench/harness/cublas_baseline.h"
#include "bench/harness/report.h"

namespace tessel::bench {

struct GemmShape {
  int m = 0, n = 0, k = 0;
  int batch = 1;            // problems of this shape in one launch (a batched kernel's size)
  std::string str() const;  // "MxNxK", or "BxMxNxK" (written "B*MxNxK") for batch B > 1
};

// Parses "MxNxK[,MxNxK...]" (each extent a positive integer). Bad text is a UserError naming it.
std::vector<GemmShape> parse_gemm_shapes(const std::string& text);

// A GEMM under test: C = A·Bᵀ, A (M×K), B (N×K), C (M×N), row-major, in the element type it was
// made for. Launches asynchronously on `stream`.
using GemmLauncher = std::function<void(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n,
                                        int k, CUstream stream)>;

struct GemmBenchOptions {
  std::string name;  // the kernel's name in the table
  GemmElement element = GemmElement::f16;
  int warmup = 10;
  int iterations = 50;  // timed launches of each kernel, interleaved launch by launch
};

// For one shape: fresh random inputs, poisoned outputs (NaN bytes), one checked run of each kernel
// (the output against a float64 reference on sampled entries including every corner, and against
// cuBLAS on every element), then event timings of both, interleaved launch by launch, medians
// reported.
BenchRecord bench_gemm(const GemmBenchOptions& options, const GemmShape& shape,
                       const GemmLauncher& launch, CublasBaseline& cublas);

// The tolerance on rel_err for fp32-accumulated GEMMs with outputs in `element`.
double gemm_tolerance(GemmElement element);

}  // namespace tessel::bench
