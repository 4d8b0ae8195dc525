// `tessel bench gemm`: GEMM kernels compiled by tessel (examples/kernels/gemm*.tir, or any .tir
// GEMM given by path) against cuBLAS on the same inputs in one process.
#pragma once

#include <string>
#include <vector>

namespace tessel::bench {

// The kernels `tessel bench gemm` runs when none are given: the f16 and bf16 TMA + wgmma GEMMs.
std::vector<std::string> default_gemm_kernels();
// The default shapes: the two square-ish targets and one ragged shape.
inline constexpr const char* kDefaultGemmShapes = "8192x8192x8192,8192x8192x4096,8191x4097x520";

// Runs the suite; `args` are the arguments after `gemm`:
// [--kernels a,b] [--shapes MxNxK,...] [--dtype f16|bf16|all] [--json FILE] [--iterations N]
// [--warmup N] [--compile-only]. Returns the exit code (1 when a kernel fails to compile, run or
// check). Without a GPU only --compile-only runs; otherwise it is a UserError.
int run_gemm_bench(const std::vector<std::string>& args);

}  // namespace tessel::bench
