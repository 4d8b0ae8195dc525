// Reading tensors out of Python objects without copying them: torch.Tensor (read directly through
// its attributes, the fast path), objects with __cuda_array_interface__, and anything DLPack or the
// buffer protocol describes (numpy arrays, CPU tensors, JAX/CuPy arrays) through nanobind's
// ndarray. The kernel call path (kernel.cpp) reads each argument with read_array into storage it
// reuses from call to call, so a call allocates nothing on the C++ side once shapes repeat.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/type.h"

namespace tessel::python {

// Where an array's memory is: the host (the interpreter can read it) or a CUDA device.
enum class Place { host, device };

struct ArrayRef {
  uintptr_t data = 0;
  std::vector<int64_t> shape;  // assigned in place: no allocation when the rank repeats
  ir::ScalarKind element = ir::ScalarKind::f32;
  Place place = Place::host;
  int device = 0;  // the CUDA device ordinal when on a device
  bool writable = true;
  bool is_torch = false;  // read through the torch fast path (the stream comes from torch)
};

// Fills `out` when `object` is an array: true. False when it is not one (a number, a string...).
// An array tessel cannot take (an element type it has no name for, a non-contiguous layout) is a
// LaunchFailure naming the argument ("argument 0 (%A)").
bool read_array(PyObject* object, ArrayRef& out, size_t index, const std::string& param_name);

// The raw CUstream of torch's current stream on `device` when torch is imported, else null
// (the legacy default stream).
void* torch_current_stream(int device);

// The tessel element type of a dtype name as Python code spells it ("f16", "float16", "bfloat16",
// "f32", ...), for the torch fast path's table and for tessel.dtype().
bool element_from_name(const std::string& name, ir::ScalarKind& out);

// Human-readable name of an argument for messages: "argument 0 (%A)".
std::string argument_name(size_t index, const std::string& param_name);

}  // namespace tessel::python
