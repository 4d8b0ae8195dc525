#include "argument_reader.h"

#include <cstring>
#include <memory>
#include <optional>

#include "errors.h"
#include "interp/interpreter.h"

namespace nb = nanobind;

namespace tessel::python {
namespace {

std::string type_name(PyObject* object) {
  return Py_TYPE(object)->tp_name;
}

// An array-like object passed where a scalar is declared (numbers are checked first, so this
// costs nothing on the common path).
bool looks_like_array(PyObject* object) {
  nb::handle h(object);
  return nb::hasattr(h, "__dlpack__") || nb::hasattr(h, "__cuda_array_interface__") ||
         nb::hasattr(h, "__array_interface__");
}

}  // namespace

std::vector<const ir::Value*> kernel_params(const ir::Operation& kernel) {
  std::vector<const ir::Value*> params;
  for (const auto& param : kernel.region(0)->arguments()) params.push_back(param.get());
  return params;
}

ArgumentReader::ArgumentReader(const ir::Operation& kernel, std::string label)
    : label_(std::move(label)), params_(kernel_params(kernel)) {
  slots_.resize(params_.size());
}

Place ArgumentReader::read(const nb::args& args) {
  if (args.size() != params_.size()) {
    std::string list;
    for (const ir::Value* p : params_) list += (list.empty() ? "%" : ", %") + p->name();
    launch_error(label_, " takes ", params_.size(), " arguments (", list, "), got ", args.size());
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
      ArrayRef& a = slot.array;
      // Packed 4-bit tensors travel as bytes: a uint8 (u4) or int8 (i4) array whose last
      // dimension holds two values a byte (value 2k in the low nibble of byte k), so its
      // logical last extent is twice the array's.
      const bool packed4 = (t.element() == ir::ScalarKind::u4 && a.element == ir::ScalarKind::u8) ||
                           (t.element() == ir::ScalarKind::i4 && a.element == ir::ScalarKind::i8);
      if (packed4 && !a.shape.empty()) {
        a.element = t.element();
        a.shape.back() *= 2;
      }
      if (a.element != t.element()) {
        launch_error(argument_name(i, params_[i]->name()), " has element type ",
                     ir::to_string(a.element), " but ", label_, " declares ", t.str());
      }
      if (static_cast<int>(a.shape.size()) != t.rank()) {
        launch_error(argument_name(i, params_[i]->name()), " has rank ", a.shape.size(), " but ",
                     label_, " declares ", t.str(), " (rank ", t.rank(), ")");
      }
      if (place && *place != a.place) {
        launch_error(label_, ": ", argument_name(i, params_[i]->name()), " is in ",
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

const std::vector<KernelArg>& ArgumentReader::kernel_args() {
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
  return launch_args_;
}

void* ArgumentReader::stream_for(nb::handle value) const {
  if (value.is_valid() && !value.is_none()) {
    // A raw CUstream (an int), a torch.cuda.Stream (.cuda_stream), or an object of the CUDA
    // stream protocol (__cuda_stream__ -> (version, handle)).
    if (PyLong_Check(value.ptr())) return PyLong_AsVoidPtr(value.ptr());
    if (nb::hasattr(value, "cuda_stream")) return PyLong_AsVoidPtr(value.attr("cuda_stream").ptr());
    if (nb::hasattr(value, "__cuda_stream__")) {
      nb::tuple t = nb::cast<nb::tuple>(value.attr("__cuda_stream__")());
      return PyLong_AsVoidPtr(t[1].ptr());
    }
    launch_error(label_,
                 ": stream= takes an int (a CUstream), a torch.cuda.Stream or an object "
                 "with __cuda_stream__, got a ",
                 type_name(value.ptr()));
  }
  // torch's current stream when the tensors are torch's: a tessel kernel orders with the torch
  // work around it, as a torch operator would.
  return any_torch_ ? torch_current_stream(device_) : nullptr;
}

void ArgumentReader::check_device() const {
  if (device_ != 0) {
    launch_error(label_, ": the tensors are on cuda:", device_,
                 "; tessel launches on device 0 (set CUDA_VISIBLE_DEVICES to pick the GPU)");
  }
}

std::map<std::string, int64_t> ArgumentReader::sizes(const ir::Operation& kernel) const {
  std::map<std::string, int64_t> sizes;
  std::vector<const ir::Value*> params = kernel_params(kernel);
  for (size_t i = 0; i < params.size() && i < slots_.size(); ++i) {
    if (!slots_[i].is_array) continue;
    const ir::Type& t = params[i]->type();
    for (int d = 0; d < t.rank() && d < static_cast<int>(slots_[i].array.shape.size()); ++d) {
      const ir::Extent& e = t.shape()[d];
      if (!e.is_static()) sizes.emplace(e.symbol, slots_[i].array.shape[d]);
    }
  }
  return sizes;
}

void ArgumentReader::interpret(const ir::Operation& kernel, const std::string& schedule,
                               int64_t sm_count) {
  as_launch_errors([&] {
    interp::RunOptions options;
    options.sm_count = sm_count;
    if (!schedule.empty()) options.schedule = interp::Schedule::parse(schedule);
    // Sizes from the tensors' extents (the first binding of each symbol; the interpreter checks
    // every shape against them and the kernel's facts).
    options.sizes = sizes(kernel);
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
      hosts.push_back(std::make_unique<interp::HostTensor>(slot.array.element, slot.array.shape));
      std::vector<uint8_t>& bytes = hosts.back()->bytes();
      if (!bytes.empty())
        std::memcpy(bytes.data(), reinterpret_cast<const void*>(slot.array.data), bytes.size());
      arguments.emplace_back(hosts.back().get());
    }
    {
      nb::gil_scoped_release release;
      interp::interpret(kernel, arguments, options);
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
        launch_error(label_, " writes ", argument_name(i, params_[i]->name()),
                     ", which is a read-only array");
      }
    }
  });
}

}  // namespace tessel::python
