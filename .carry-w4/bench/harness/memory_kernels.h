// The memory-bound example kernels (examples/kernels/*.tir) as runnable cases: random inputs, a
// float64 host reference, a checked GPU run, and the bytes each kernel must move (for GB/s). Shared
// by test/gpu/kernels (correctness on ragged shapes) and `tessel bench memory-bound` (speed).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "interp/numerics.h"
#include "runtime/buffer.h"

namespace tessel::bench {

// One kernel on one shape, with its inputs in host and device memory.
class MemoryCase {
 public:
  // `kernel`: a name of examples/kernels (rmsnorm, layernorm, softmax, bias_gelu, gemv), a path to
  // a .tir file (a variant named `<base>_<anything>.tir`), or a test kernel given as text through
  // `source`; rows x cols is the problem (GEMV: M x N matrix).
  MemoryCase(const std::string& kernel, int64_t rows, int64_t cols, uint64_t seed,
             const std::string& source = "");

  const CompiledKernel& compiled() const { return *compiled_; }
  const std::string& name() const { return name_; }
  // Poisons the output (all bits set: NaN for floats), launches, and waits.
  void run();
  void launch(CUstream stream);  // launch only (for timing)
  // ||out - ref|| / ||ref|| of the last run against the float64 reference, over every
  // `step`-th row (1: all rows; the bench checks a sample of its 8192 rows to stay quick).
  void check_every_nth_row(int64_t step) {
    row_step_ = step;
    reference_.clear();
  }
  double relative_error();
  // Bytes the kernel must move at least: every input read once, the output written once.
  int64_t ideal_bytes() const { return ideal_bytes_; }
  const std::vector<double>& reference();

 private:
  std::string name_;
  int64_t rows_, cols_;
  std::unique_ptr<CompiledKernel> compiled_;
  std::vector<interp::HostTensor> host_;
  std::vector<runtime::DeviceBuffer> device_;
  std::vector<KernelArg> args_;
  int output_ = -1;
  double eps_ = 1e-5;
  int64_t ideal_bytes_ = 0;
  int64_t row_step_ = 1;
  std::vector<double> reference_;
};

// The names of the example kernels MemoryCase knows a reference for.
std::vector<std::string> memory_kernel_names();

}  // namespace tessel::bench
