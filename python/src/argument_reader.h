// A call's arguments, read against a kernel's parameters: what tessel.Kernel and tessel.Variants
// share. One reader per callable object, reused by every call: it reads the Python arguments
// (arguments.h) into storage that keeps its capacity, then hands them over as the compiled
// kernel's launch arguments (updated in place) or as host tensors to the CPU interpreter.
//
// It sits on the launch path (budget 10 us per call, python/README.md): nothing here allocates
// once the shapes repeat, and the owner calls it directly (no virtual calls, no callbacks).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arguments.h"
#include "compile/compile.h"
#include "ir/ir.h"

namespace tessel::python {

// The SM count the interpreter sizes persistent grids for when a call on host arrays interprets:
// a few, so that a persistent kernel's blocks loop over several tiles as on the GPU.
constexpr int64_t kInterpreterSmCount = 3;

class ArgumentReader {
 public:
  // Reads arguments for `kernel`'s parameters; `label` names the callee in messages ("@gemm").
  ArgumentReader(const ir::Operation& kernel, std::string label);

  const std::string& label() const { return label_; }

  // Reads `args` (LaunchError when they do not fit the parameters); returns where the arrays are
  // (host when there are none).
  Place read(const nanobind::args& args);
  // The last arguments read, as launch arguments (device arrays).
  const std::vector<KernelArg>& kernel_args();
  // Drops the prepared launch arguments (a new compiled kernel: they are rebuilt on next use).
  void forget_kernel_args() { launch_args_.clear(); }
  // The stream to launch on: `stream` (an int, a torch.cuda.Stream, __cuda_stream__), else torch's
  // current one when the tensors are torch's, else the default stream.
  void* stream_for(nanobind::handle stream) const;
  // LaunchError unless the device arrays read last are on device 0 (where tessel launches).
  void check_device() const;

  // The sizes the arrays read last (host or device) bind to `kernel`'s size symbols (each
  // symbol's first binding; the interpreter or the launch checks the rest). `kernel` takes the same parameters as the reader's.
  std::map<std::string, int64_t> sizes(const ir::Operation& kernel) const;
  // Runs the interpreter for `kernel` on the host arrays read last, written back in place.
  void interpret(const ir::Operation& kernel, const std::string& schedule, int64_t sm_count);

 private:
  std::string label_;
  std::vector<const ir::Value*> params_;
  struct Slot {
    bool is_array = false;
    ArrayRef array;
    double real = 0;
    int64_t integer = 0;
  };
  std::vector<Slot> slots_;
  std::vector<KernelArg> launch_args_;
  bool any_torch_ = false;
  int device_ = 0;
};

// The parameters of a kernel op, in order.
std::vector<const ir::Value*> kernel_params(const ir::Operation& kernel);

}  // namespace tessel::python
