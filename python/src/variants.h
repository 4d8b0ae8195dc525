// tessel.Variants: several kernels with the same parameters, called as one (KernelVariants,
// src/compile/variants.h). On device tensors a call launches the variant the tuning cache names for
// the arguments' sizes on this GPU, else the cost model's (GEMM or attention), else the first;
// tune() measures them all and records the fastest. On host arrays there is no device to tune
// for: a call interprets the cost model's choice at the interpreter's SM count.
//
// The call path is tessel.Kernel's (argument_reader.h): one reader reused by every call, then
// KernelVariants::launch, whose choice is memoized per shape.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "argument_reader.h"
#include "compile/variants.h"
#include "kernel.h"

namespace tessel::python {

class Variants {
 public:
  // `kernels`: tessel.Kernel objects; those not compiled yet are compiled in place (for the GPU
  // when there is one, else to CUDA text: the parameter check needs the emitted parameters, the
  // interpreter nothing). CompileError when their parameters differ or two share a name.
  Variants(nanobind::sequence kernels, std::optional<std::vector<std::string>> names);

  void call(nanobind::args args, nanobind::kwargs kwargs);
  // Interprets `variant` (a name; the cost model's choice when empty) on host arrays.
  void interpret(nanobind::args args, const std::string& variant, const std::string& schedule,
                 int64_t sm_count);
  // The name of the variant a call with these arguments runs.
  std::string choose(nanobind::args args);
  // The cost model's choice at `sizes` on `sm_count` SMs (no arguments, no GPU).
  std::string model_choice(const std::map<std::string, int64_t>& sizes, int64_t sm_count) const;
  // KernelVariants::tune on device tensors: (name, median ms) per variant; `progress` is True
  // (print each line), a callable (given each line) or None/False.
  std::vector<std::pair<std::string, double>> tune(nanobind::args args, int warmup, int iterations,
                                                   nanobind::handle progress);

  std::vector<std::string> names() const;
  const std::string& family() const { return variants_->family(); }
  nanobind::list kernels() const;
  std::string repr() const;

 private:
  size_t index_of(const std::string& name) const;
  size_t host_choice() const;  // the cost model's choice for the host arrays read last

  std::vector<nanobind::object> objects_;  // the tessel.Kernel objects, kept alive
  std::vector<Kernel*> kernels_;
  std::optional<KernelVariants> variants_;
  std::optional<ArgumentReader> arguments_;
};

void register_variants(nanobind::module_& m);

}  // namespace tessel::python
