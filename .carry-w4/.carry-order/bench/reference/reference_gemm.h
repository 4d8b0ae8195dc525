// Host launcher of the reference GEMM: C = A·Bᵀ (A M×K, B N×K, C M×N, row-major, f16 or bf16 in
// and out, f32 accumulation) by the hand-written persistent warp-specialized kernel in
// reference_gemm_kernel.cu, compiled at run time through the runtime's NVRTC cache.
//
// It is the known-good target that tessel's code generator aims at, and the kernel behind
// `tessel bench gemm-reference`. Preconditions (checked, UserError otherwise): M, N, K ≥ 0;
// K % 8 == 0 (TMA reads A and B and needs 16-byte row strides); A and B 16-byte aligned. Any M and
// N work: tiles at the edges are handled by TMA bounds, and when N % 8 != 0 (C rows not 16-byte
// aligned, so no TMA store) the epilogue falls back to bounds-checked plain stores.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

#include "runtime/compiler.h"

namespace tessel::reference {

enum class GemmType { f16, bf16 };

std::string to_string(GemmType type);

// Tuning knobs, for experiments; the defaults are the measured best on H100.
struct ReferenceGemmOptions {
  int cluster_m = 2;  // 1, or 2: two CTAs on vertically adjacent tiles share B by TMA multicast
  int group_m = 8;  // height of the grouped tile raster, in 128-row tiles (a multiple of cluster_m)
  // Store each tile's output while the next tile's first K blocks run (needs cluster_m == 2):
  // 1-4% faster at M = N = 8192 than storing it before them (bench/reference/NOTES.md).
  bool overlap_epilogue = true;
};

class ReferenceGemm {
 public:
  // Compiles the kernel (or finds it in the cache). Needs NVRTC, not a GPU.
  explicit ReferenceGemm(GemmType type, ReferenceGemmOptions options = {});
  ~ReferenceGemm();
  ReferenceGemm(const ReferenceGemm&) = delete;
  ReferenceGemm& operator=(const ReferenceGemm&) = delete;

  GemmType type() const { return type_; }
  const ReferenceGemmOptions& options() const { return options_; }
  const runtime::CompileResult& compile_result() const { return compile_result_; }
  // The kernel entry point this instance launches, e.g. "reference_gemm_f16_cluster2".
  const std::string& kernel_name() const { return kernel_name_; }

  // Enqueues C = A·Bᵀ on `stream` (asynchronous). Loads the module on first use (needs a GPU).
  void run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n, int k, CUstream stream);

 private:
  struct Loaded;
  GemmType type_;
  ReferenceGemmOptions options_;
  runtime::CompileResult compile_result_;
  std::string kernel_name_;
  std::unique_ptr<Loaded> loaded_;
};

// Throws the UserError run() would throw for these arguments; returns normally when they are valid.
void check_reference_gemm_arguments(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n,
                                    int k);

// The kernel source as NVRTC receives it (configuration header pasted in).
std::string reference_gemm_source();

}  // namespace tessel::reference
