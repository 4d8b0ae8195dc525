#include "kernel.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "errors.h"
#include "interp/interpreter.h"
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

std::string type_name(PyObject* object) { return Py_TYPE(object)->tp_name; }

// An array-like object passed where a scalar is declared (numbers are checked first, so this
// costs nothing on the common path).
bool looks_like_array(PyObject* object) {
  nb::handle h(object);
  return nb::hasattr(h, "__dlpack__") || nb::hasattr(h, "__cuda_array_interface__") ||
         nb::hasattr(h, "__array_interface__");
}

}  // namespace

Kernel::Kernel(std::shared_ptr<ir::Module> module, const ir::Operation* kernel)
    : module_(std::move(module)), kernel_(kernel) {
  const ir::Block& body = *kernel_->region(0);
  for (const auto& param : body.arguments()) params_.push_back(param.get());
  slots_.resize(params_.size());
}

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
  launch_args_.clear();
}

const CompiledKernel& Kernel::compiled_kernel() const {
  if (!compiled_) {
    user_error(kernel_->loc(), "@", name(),
               " is not compiled yet: call .compile() (or launch it on device tensors)");
  }
  return *compiled_;
}

void Kernel::ensure_compiled() {
  if (!compiled_) compile(KernelOptions{});
}

Place Kernel::read_arguments(const nb::args& args) {
  if (args.size() != params_.size()) {
    std::string list;
    for (const ir::Value* p : params_) list += (list.empty() ? "%" : ", %") + p->name();
    launch_error("@", name(), " takes ", params_.size(), " arguments (", list, "), got ",
                 args.size());
  }
  std::optional<Place> place;
  any_torch_ = false;
  for (size_t i = 0; i < params_.size(); ++i) {
    PyObject* object = args[i].ptr();
    const ir::Type& t = params_[i]->type();
    Slot& slot = slots_[i];
    if (t.is_tensor()) {
      if (!read_array(object, slot.array, i, params_[i]->name())) {
        launch_error(argument_name(i, params_[i]->name()), " must be a tensor of type ", t.str(),
                     ", got a ", type_name(object));
      }
      const ArrayRef& a = slot.array;
      if (a.element != t.element()) {
        launch_error(argument_name(i, params_[i]->name()), " has element type ",
                     ir::to_string(a.element), " but @", name(), " declares ", t.str());
      }
      if (static_cast<int>(a.shape.size()) != t.rank()) {
        launch_error(argument_name(i, params_[i]->name()), " has rank ", a.shape.size(),
                     " but @", name(), " declares ", t.str(), " (rank ", t.rank(), ")");
      }
      if (place && *place != a.place) {
        launch_error("@", name(), ": ", argument_name(i, params_[i]->name()), " is in ",
                     a.place == Place::host ? "host" : "device",
                     " memory but an earlier tensor argument is not; pass all tensors on the GPU "
                     "(a launch) or all on the CPU (the interpreter)");
      }
      place = a.place;
      any_torch_ = any_torch_ || a.is_torch;
      device_ = a.device;
      slot.is_array = true;
      continue;
    }
    slot.is_array = false;
    bool is_float = ir::is_float(t.element());
    if (PyFloat_Check(object) || PyLong_Check(object) || !looks_like_array(object)) {
      if (is_float) {
        slot.real = PyFloat_AsDouble(object);
      } else if (PyFloat_Check(object)) {
        launch_error(argument_name(i, params_[i]->name()), " must be an integer (", t.str(),
                     "), got the float ", PyFloat_AS_DOUBLE(object));
      } else {
        slot.integer = PyLong_AsLongLong(object);
      }
      if (PyErr_Occurred()) {
        PyErr_Clear();
        launch_error(argument_name(i, params_[i]->name()), " must be a number (", t.str(),
                     "), got a ", type_name(object));
      }
      continue;
    }
    launch_error(argument_name(i, params_[i]->name()), " must be a scalar (", t.str(),
                 "), not an array (a ", type_name(object), ")");
  }
  return place.value_or(Place::host);
}

void Kernel::to_kernel_args() {
  launch_args_.resize(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const Slot& slot = slots_[i];
    KernelArg& arg = launch_args_[i];
    if (slot.is_array) {
      // Updated in place: the shape vector keeps its storage from call to call.
      if (!std::holds_alternative<TensorArg>(arg)) arg = TensorArg{};
      TensorArg& t = std::get<TensorArg>(arg);
      t.data = static_cast<CUdeviceptr>(slot.array.data);
      t.shape = slot.array.shape;
      t.element = slot.array.element;
    } else if (ir::is_float(params_[i]->type().element())) {
      arg = slot.real;
    } else {
      arg = slot.integer;
    }
  }
}

void* Kernel::stream_for(nb::handle value) const {
  if (value.is_valid() && !value.is_none()) {
    {
      // A raw CUstream (an int), a torch.cuda.Stream (.cuda_stream), or an object of the CUDA
      // stream protocol (__cuda_stream__ -> (version, handle)).
      if (PyLong_Check(value.ptr())) return PyLong_AsVoidPtr(value.ptr());
      if (nb::hasattr(value, "cuda_stream"))
        return PyLong_AsVoidPtr(value.attr("cuda_stream").ptr());
      if (nb::hasattr(value, "__cuda_stream__")) {
        nb::tuple t = nb::cast<nb::tuple>(value.attr("__cuda_stream__")());
        return PyLong_AsVoidPtr(t[1].ptr());
      }
      launch_error("@", name(), ": stream= takes an int (a CUstream), a torch.cuda.Stream or an "
                   "object with __cuda_stream__, got a ", type_name(value.ptr()));
    }
  }
  // torch's current stream when the tensors are torch's: a tessel kernel orders with the torch
  // work around it, as a torch operator would.
  return any_torch_ ? torch_current_stream(device_) : nullptr;
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
  Place place = read_arguments(args);
  if (place == Place::host) {
    if (stream_arg.is_valid() && !stream_arg.is_none())
      launch_error("@", name(), ": stream= goes with device tensors");
    interpret(args, "", 3);
    return;
  }
  CUstream stream = static_cast<CUstream>(stream_for(stream_arg));
  ensure_compiled();
  as_launch_errors([&] {
    if (device_ != 0) {
      launch_error("@", name(), ": the tensors are on cuda:", device_,
                   "; tessel launches on device 0 (set CUDA_VISIBLE_DEVICES to pick the GPU)");
    }
    runtime::context().make_current();
    to_kernel_args();
    compiled_->launch(launch_args_, stream);
  });
}

void Kernel::interpret(nb::args args, const std::string& schedule, int64_t sm_count) {
  if (read_arguments(args) != Place::host) {
    launch_error("@", name(), ": the interpreter runs on host memory (numpy arrays, CPU tensors); "
                 "these tensors are on a GPU");
  }
  as_launch_errors([&] {
    interp::RunOptions options;
    options.sm_count = sm_count;
    if (!schedule.empty()) options.schedule = interp::Schedule::parse(schedule);
    // Sizes from the tensors' extents (the first binding of each symbol; the interpreter checks
    // every shape against them and the kernel's facts).
    std::vector<std::unique_ptr<interp::HostTensor>> hosts;
    std::vector<interp::Argument> arguments;
    for (size_t i = 0; i < params_.size(); ++i) {
      const Slot& slot = slots_[i];
      if (!slot.is_array) {
        if (ir::is_float(params_[i]->type().element())) {
          arguments.emplace_back(slot.real);
        } else {
          arguments.emplace_back(slot.integer);
        }
        continue;
      }
      const ir::Type& t = params_[i]->type();
      for (int d = 0; d < t.rank(); ++d) {
        const ir::Extent& e = t.shape()[d];
        if (!e.is_static()) options.sizes.emplace(e.symbol, slot.array.shape[d]);
      }
      hosts.push_back(std::make_unique<interp::HostTensor>(slot.array.element, slot.array.shape));
      std::vector<uint8_t>& bytes = hosts.back()->bytes();
      if (!bytes.empty())
        std::memcpy(bytes.data(), reinterpret_cast<const void*>(slot.array.data), bytes.size());
      arguments.emplace_back(hosts.back().get());
    }
    {
      nb::gil_scoped_release release;
      interp::interpret(*kernel_, arguments, options);
    }
    // Written back in place (the arrays are the kernel's global memory); a read-only array must
    // come back unchanged.
    for (size_t i = 0, h = 0; i < params_.size(); ++i) {
      if (!slots_[i].is_array) continue;
      const std::vector<uint8_t>& bytes = hosts[h++]->bytes();
      void* target = reinterpret_cast<void*>(slots_[i].array.data);
      if (bytes.empty()) continue;
      if (slots_[i].array.writable) {
        std::memcpy(target, bytes.data(), bytes.size());
      } else if (std::memcmp(target, bytes.data(), bytes.size()) != 0) {
        launch_error("@", name(), " writes ", argument_name(i, params_[i]->name()),
                     ", which is a read-only array");
      }
    }
  });
}

nb::dict Kernel::benchmark(nb::args args, int warmup, int iterations) {
  if (read_arguments(args) != Place::device) {
    launch_error("@", name(), ": benchmark() times a GPU launch; pass device tensors");
  }
  CUstream stream = static_cast<CUstream>(stream_for(nb::handle()));
  ensure_compiled();
  runtime::TimingResult r = as_launch_errors([&] {
    runtime::context().make_current();
    to_kernel_args();
    return runtime::time_launches(
        [&](CUstream s) { compiled_->launch(launch_args_, s); }, warmup, iterations, stream);
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
  if (read_arguments(args) != Place::device) {
    launch_error("@", name(), ": launch_repeatedly() launches on the GPU; pass device tensors");
  }
  CUstream stream = static_cast<CUstream>(stream_for(nb::handle()));
  ensure_compiled();
  as_launch_errors([&] {
    runtime::context().make_current();
    to_kernel_args();
    for (int64_t i = 0; i < count; ++i) compiled_->launch(launch_args_, stream);
  });
}

}  // namespace tessel::python
