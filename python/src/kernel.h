// tessel.Kernel: one kernel of a parsed tile program, its compiled form (made on demand), and the
// call path. A call reads its arguments (arguments.h), then either launches the compiled kernel
// on the GPU (arrays in device memory) or runs the CPU interpreter (arrays in host memory).
//
// The launch path is built for a low host overhead per call: one Python-to-C++ call, arguments
// read straight from the tensor objects into argument storage that lives in the Kernel and is
// reused (its shape vectors keep their capacity), and CompiledKernel::launch, which skips every
// check and rebuild when the arguments repeat and otherwise rebinds sizes and rebuilds only what
// changed (TMA descriptors of moved tensors).
#pragma once

#include <nanobind/nanobind.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "argument_reader.h"
#include "compile/compile.h"
#include "ir/ir.h"

namespace tessel::python {

struct KernelOptions {
  std::string target;  // "sm_90a", "sm_80"; empty: what the kernel pins on its block_grid, else sm_90a
  std::string arch;    // NVRTC's arch; empty: the device's when there is one, else the target's
  bool cubin = true;   // false: stop after the CUDA source (no NVRTC)
  bool use_cache = true;
  std::string cache_dir;  // empty: $TESSEL_CACHE_DIR or ~/.cache/tessel
  std::vector<std::string> passes;
  std::vector<std::string> nvrtc_flags;
  std::map<std::string, int64_t> size_hints;  // CompileOptions::size_hints
};

class Kernel {
 public:
  // `module` holds the parsed, verified program; `kernel` is one of its kernels.
  Kernel(std::shared_ptr<ir::Module> module, const ir::Operation* kernel);

  const std::string& name() const;
  const ir::Operation& op() const { return *kernel_; }
  std::string source_ir() const;  // the kernel as tile IR text (before any pass)

  // Compiles for the GPU (passes, emitter, NVRTC unless options.cubin is false).
  void compile(const KernelOptions& options);
  bool compiled() const { return compiled_.has_value(); }
  const CompiledKernel& compiled_kernel() const;  // a CompileError when not compiled yet

  // kernel(*args, stream=None): launch on the GPU or interpret on the CPU, by where the arrays are.
  void call(nanobind::args args, nanobind::kwargs kwargs);
  // Runs the interpreter on host arrays; they are written in place.
  void interpret(nanobind::args args, const std::string& schedule, int64_t sm_count);
  // Times the launch with device events (runtime::time_launches): {median_ms, min_ms, ...}.
  nanobind::dict benchmark(nanobind::args args, int warmup, int iterations);
  // `count` launches back to back from C++ (no Python between them), to separate the host cost of
  // the Python call from the launch's own: what scripts/gpu/python_check.sh compares against.
  void launch_repeatedly(nanobind::args args, int64_t count);

 private:
  // Compiles with the default options where nothing is compiled yet; a row program (no mma) is
  // scheduled for the sizes the arguments read last give it (CompileOptions::size_hints).
  void ensure_compiled();

  std::shared_ptr<ir::Module> module_;
  const ir::Operation* kernel_;
  std::optional<CompiledKernel> compiled_;
  ArgumentReader arguments_;  // the argument storage reused by every call
};

void register_kernel(nanobind::module_& m);

}  // namespace tessel::python
