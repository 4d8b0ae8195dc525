// The compile-and-launch API: a tile-IR kernel -> passes -> CUDA C++ -> NVRTC (cached by content)
// -> a kernel object that launches on device tensors with their shapes checked.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "ir/ir.h"
#include "runtime/buffer.h"
#include "runtime/module.h"
#include "target/cuda/emit.h"
#include "target/cuda/target.h"

namespace tessel {

struct CompileOptions {
  bool print_after_all = false;    // print the IR after every pass (also TESSEL_DUMP_IR=1)
  std::ostream* dump = nullptr;    // where; stderr when null
  std::ostream* timing = nullptr;  // per-pass timing lines, when not null
  bool use_cache = true;           // the on-disk cubin cache of src/runtime
  std::string cache_directory;     // empty: the runtime's default
  std::vector<std::string> nvrtc_flags;
  bool compile_cubin = true;  // false: stop after the CUDA source (no NVRTC)
  // The architecture NVRTC compiles the cubin for; empty: the target's own. The target decides
  // which instructions the kernel uses (sm_80: cp.async + mma.sync), this decides where the cubin
  // loads: an sm_80-path kernel runs on an H100 when compiled with nvrtc_arch = "sm_90a" (an
  // sm_80 cubin does not load there). See native_arch().
  std::string nvrtc_arch;
  // Passes to run instead of the default pipeline (pipeline::PipelineOptions::passes).
  std::vector<std::string> passes;
  // The sizes the kernel is scheduled for (schedule-rows: a row program's tile, block and where
  // its rows are held), by size symbol, e.g. {{"M", 4096}, {"N", 16384}}: written as the `hint`
  // of the kernel's `size` ops, so part of its text and of the cache key. The kernel stays correct
  // at any size. Each must name a size of the kernel (a UserError otherwise).
  std::map<std::string, int64_t> size_hints;
};

// A global tensor argument: device memory and the shape it has (row-major, contiguous).
struct TensorArg {
  CUdeviceptr data = 0;
  std::vector<int64_t> shape;
  ir::ScalarKind element = ir::ScalarKind::f32;
};
// One argument per kernel parameter, in declaration order: tensors, or scalars (floats as double,
// integers as int64_t).
using KernelArg = std::variant<TensorArg, double, int64_t>;

struct CompileTimes {
  // pipeline_ms covers the passes, or parsing the cached lowered IR on a disk hit.
  double pipeline_ms = 0, emit_ms = 0, nvrtc_ms = 0, total_ms = 0;
  // An in-process hit or a disk hit of the whole compiled kernel (both: no passes, no emitter, no
  // NVRTC), or NVRTC's cubin cache hit after the emitter ran.
  bool cache_hit = false;
  // The lowered IR and the emitted kernel (and the cubin, when asked for) came from the disk entry
  // of the whole compiled kernel: neither the passes nor the emitter ran.
  bool from_disk = false;
};

// Whether kernels that wait for the launch before them (overlap-launches) are launched so that
// they may overlap it: true unless the environment sets TESSEL_OVERLAP_LAUNCHES=0 (read once).
bool overlapping_launches_allowed();

class CompiledKernel {
 public:
  const std::string& name() const { return name_; }
  const std::string& lowered_ir() const { return lowered_ir_; }  // the IR the emitter consumed
  const target::cuda::EmittedKernel& emitted() const { return emitted_; }
  const std::string& cuda_source() const { return emitted_.source; }
  const std::string& cubin() const { return cubin_; }
  const std::string& cache_key() const { return cache_key_; }
  const std::string& arch() const { return arch_; }
  const CompileTimes& times() const { return times_; }

  // The size symbols bound by `args`. UserError when an argument does not match the kernel's
  // declaration: wrong count, a tensor where a scalar is declared (or the reverse), a wrong
  // element type or rank, an extent that differs from a static one or from another binding of the
  // same symbol, a broken divisibility fact, or a misaligned pointer.
  std::map<std::string, int64_t> bind(const std::vector<KernelArg>& args) const;
  // The launch configuration for these sizes (grid from the kernel's block_grid).
  // `sm_count`: what a persistent grid is sized for; the device's when absent (a GPU is needed
  // then only for kernels that read sm_count).
  runtime::LaunchConfig launch_config(const std::map<std::string, int64_t>& sizes,
                                      std::optional<int64_t> sm_count = std::nullopt) const;
  // What a persistent grid is sized for, the kernel's `sm_count`: the blocks the device holds at
  // once once the kernel is loaded, the device's SM count before (1 when the kernel reads none).
  int64_t launch_sm_count() const;
  // Checks the arguments, loads the cubin on first use, and launches (asynchronously) on `stream`.
  // A kernel with workspaces (split-k's partial tiles and arrival counters, src/ir/async.h) uses
  // memory this object allocates on first need and keeps: launches of one object follow one
  // another on one stream (concurrent launches of the same object would share it; copy the
  // object for another stream: a copy allocates its own).
  void launch(const std::vector<KernelArg>& args, CUstream stream = nullptr);

 private:
  friend CompiledKernel compile(const ir::Operation&, const target::cuda::Target&,
                                const CompileOptions&);
  std::string name_, lowered_ir_, cubin_, cache_key_, arch_;
  SourceLocation loc_;  // the input kernel's location, for launch errors
  target::cuda::EmittedKernel emitted_;
  CompileTimes times_;
  std::shared_ptr<ir::Module> module_;  // the lowered kernel (grid evaluation, declaration checks)
  std::shared_ptr<runtime::Module> loaded_;
  // Blocks the device holds at once (whole clusters for a cluster kernel; set when loaded).
  int64_t resident_blocks_ = 0;
  runtime::Function function_;
  std::map<std::string, int64_t> last_sizes_;  // the sizes of the last launch, and its config
  std::optional<runtime::LaunchConfig> last_config_;
  // The launch state derived from the last arguments (see launch()).
  void prepare_launch(const std::vector<KernelArg>& args);
  bool launch_ready_ = false;
  const CompiledKernel* prepared_by_ = nullptr;
  std::vector<KernelArg> last_args_;
  std::vector<CUdeviceptr> pointers_;
  std::vector<float> floats_;
  std::vector<int> ints_;
  std::vector<void*> slots_;  // points into the three vectors above and into tma_descriptors_
  // TMA descriptors, rebuilt only when their tensor's address or shape changes.
  struct CachedDescriptor {
    bool valid = false;
    CUdeviceptr data = 0;
    std::vector<int64_t> shape;
    CUtensorMap map;
  };
  std::vector<CachedDescriptor> tma_descriptors_;
  // The workspaces, by workspace op (zeroed when allocated; grown, zeroed again, when a launch
  // needs more), owned by the object that allocated them.
  std::shared_ptr<std::vector<runtime::DeviceBuffer>> workspaces_;
  const CompiledKernel* workspaces_owner_ = nullptr;
  CUdeviceptr workspace(size_t index, const std::map<std::string, int64_t>& sizes);
  const CUtensorMap& tma_descriptor(size_t index, const target::cuda::KernelParam& param,
                                    const TensorArg& tensor);
};

// Compiles one kernel op for `target` ("sm_80" or "sm_90a"). The input is not modified. Needs no
// GPU; a compile error in the generated code is an internal error of tessel, reported as such.
CompiledKernel compile(const ir::Operation& kernel, const target::cuda::Target& target,
                       const CompileOptions& options = {});

// The NVRTC architecture of the current device ("sm_90a" for compute capability 9.0, else
// "sm_<cc>"); needs a GPU.
std::string native_arch();

// PTX of CUDA source for `arch` (NVRTC, not cached): for `tessel compile --emit=ptx`.
std::string compile_ptx(const std::string& source, const std::string& arch);

}  // namespace tessel
