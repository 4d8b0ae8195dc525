#include "kernel.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "errors.h"
#include "ir/printer.h"
#include "runtime/context.h"
#include "runtime/timing.h"
#include "target/cuda/target.h"

namespace nb = nanobind;

namespace tessel::python {
namespace {

// The target a kernel pins on its block_grid (e.g. an sm_80-path GEMM), else sm_90a: as
// `tessel run --gpu` chooses.
std::string pinned_target(const ir::Operation& kernel) {
  std::string name = "sm_90a";
  ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
    if (op->kind() == ir::OpKind::block_grid && op->has_attr("target"))
      name = op->str_attr("target");
  });
  return name;
}

}  // namespace

Kernel::Kernel(std::shared_ptr<ir::Module> module, const ir::Operation* kernel)
    : module_(std::move(module)),
      kernel_(kernel),
      arguments_(*kernel, "@" + kernel->signature().name) {}

const std::string& Kernel::name() const { return kernel_->signature().name; }

std::string Kernel::source_ir() const { return ir::print_kernel(*kernel_); }

void Kernel::compile(const KernelOptions& options) {
  CompileOptions o;
  o.use_cache = options.use_cache;
  o.cache_directory = options.cache_dir;
  o.compile_cubin = options.cubin;
  o.passes = options.passes;
  o.nvrtc_flags = options.nvrtc_flags;
  o.nvrtc_arch = options.arch;
  o.size_hints = options.size_hints;
  std::string target = options.target.empty() ? pinned_target(*kernel_) : options.target;
  // NVRTC compiles passes, emitter and cubin for seconds: other Python threads run meanwhile.
  nb::gil_scoped_release release;
  if (o.compile_cubin && o.nvrtc_arch.empty()) {
    // The device's architecture when there is one (an sm_80-path kernel must be compiled for
    // sm_90a to load on an H100); without a GPU, the target's own.
    try {
      o.nvrtc_arch = native_arch();
    } catch (const UserError&) {
    }
  }
  compiled_.emplace(tessel::compile(*kernel_, target::cuda::Target::named(target), o));
  // A new compiled kernel starts with no prepared launch: the argument storage is rebuilt.
  arguments_.forget_kernel_args();
}

const CompiledKernel& Kernel::compiled_kernel() const {
  if (!compiled_) {
    user_error(kernel_->loc(), "@", name(),
               " is not compiled yet: call .compile() (or launch it on device tensors)");
  }
  return *compiled_;
}

void Kernel::ensure_compiled() {
  if (compiled_) return;
  KernelOptions options;
  // A row program (schedule-rows schedules kernels without an mma) is scheduled for the sizes of
  // its first launch: its tile, block and where it holds the row depend on them. Other kernels
  // ignore the hints, which would only split their cache entries.
  bool has_mma = false;
  ir::walk(const_cast<ir::Operation*>(kernel_),
           [&](ir::Operation* op) { has_mma = has_mma || op->kind() == ir::OpKind::mma; });
  if (!has_mma) {
    for (const auto& [symbol, value] : arguments_.sizes(*kernel_))
      if (value > 0) options.size_hints.emplace(symbol, value);  // empty tensors: no hint
  }
  compile(options);
}

void Kernel::call(nb::args args, nb::kwargs kwargs) {
  nb::handle stream_arg;
  if (kwargs.size() != 0) {
    for (auto [key, value] : kwargs) {
      std::string k = nb::cast<std::string>(key);
      if (k != "stream") launch_error("@", name(), ": unknown keyword argument '", k, "'");
      stream_arg = value;
    }
  }
  if (arguments_.read(args) == Place::host) {
    if (stream_arg.is_valid() && !stream_arg.is_none())
      launch_error("@", name(), ": stream= goes with device tensors");
    arguments_.interpret(*kernel_, "", kInterpreterSmCount);
    return;
  }
  CUstream stream = static_cast<CUstream>(arguments_.stream_for(stream_arg));
  ensure_compiled();
  as_launch_errors([&] {
    arguments_.check_device();
    runtime::context().make_current();
    compiled_->launch(arguments_.kernel_args(), stream);
  });
}

void Kernel::interpret(nb::args args, const std::string& schedule, int64_t sm_count) {
  if (arguments_.read(args) != Place::host) {
    launch_error("@", name(), ": the interpreter runs on host memory (numpy arrays, CPU tensors); "
                 "these tensors are on a GPU");
  }
  arguments_.interpret(*kernel_, schedule, sm_count);
}

nb::dict Kernel::benchmark(nb::args args, int warmup, int iterations) {
  if (arguments_.read(args) != Place::device) {
    launch_error("@", name(), ": benchmark() times a GPU launch; pass device tensors");
  }
  CUstream stream = static_cast<CUstream>(arguments_.stream_for(nb::handle()));
  ensure_compiled();
  runtime::TimingResult r = as_launch_errors([&] {
    runtime::context().make_current();
    const std::vector<KernelArg>& launch_args = arguments_.kernel_args();
    return runtime::time_launches([&](CUstream s) { compiled_->launch(launch_args, s); }, warmup,
                                  iterations, stream);
  });
  nb::dict out;
  out["median_ms"] = r.median_ms;
  out["min_ms"] = r.min_ms;
  out["max_ms"] = r.max_ms;
  out["mean_ms"] = r.mean_ms;
  out["samples_ms"] = r.samples_ms;
  return out;
}

void Kernel::launch_repeatedly(nb::args args, int64_t count) {
  if (arguments_.read(args) != Place::device) {
    launch_error("@", name(), ": launch_repeatedly() launches on the GPU; pass device tensors");
  }
  CUstream stream = static_cast<CUstream>(arguments_.stream_for(nb::handle()));
  ensure_compiled();
  as_launch_errors([&] {
    runtime::context().make_current();
    const std::vector<KernelArg>& launch_args = arguments_.kernel_args();
    for (int64_t i = 0; i < count; ++i) compiled_->launch(launch_args, stream);
  });
}

}  // namespace tessel::python
