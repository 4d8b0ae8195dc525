// `tessel bench gemm --groups G`: a grouped GEMM compiled by tessel (examples/kernels/
// gemm_grouped.tir: A [sum M_g, K], B [G, N, K], C [sum M_g, N], row ends [G]) against cuBLAS's
// grouped GEMM (cublasGemmGroupedBatchedEx, one call for all groups) and against a loop of one
// cublasGemmEx per group, on the same inputs in one process.
#pragma once

#include <string>
#include <vector>

namespace tessel::bench {

struct GroupedBenchOptions {
  std::vector<std::string> kernels;  // default: gemm_grouped
  std::string shapes;                // MxNxK: M the largest group's rows (each M_g in 1..M)
  int groups = 0;
  int iterations = 50, warmup = 10;
  std::string json;
  std::string command;
};

// Checks (sampled entries against float64; every element against cuBLAS) and times each kernel
// at each shape with `groups` groups of random row counts. Returns the exit code.
int run_grouped_gemm_bench(const GroupedBenchOptions& options);

}  // namespace tessel::bench
