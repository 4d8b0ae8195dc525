// The extension module tessel._tessel: parsing tile programs, the Kernel class (kernel.h), the
// Variants class (variants.h), the tile builder (builder.h, submodule `tile`), the error
// translation (errors.h) and a few facts about the machine. The Python package (python/tessel/) is
// the public face; this module is its private half.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "builder.h"
#include "compile/compile.h"
#include "errors.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "kernel.h"
#include "runtime/context.h"
#include "runtime/kernel_cache.h"
#include "variants.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessel::python {
namespace {

// Parses and verifies a whole program; one Kernel per kernel op, all sharing the module.
std::vector<Kernel> parse(const std::string& text, const std::string& file) {
  std::shared_ptr<ir::Module> module = ir::parse_module(text, file);  // errors carry the caret
  try {
    ir::verify(*module);
  } catch (const UserError& error) {
    // The verifier reports at an op's line:column; show that line of the text too.
    if (error.location().file == file) throw with_source_excerpt(error, text);
    throw;
  }
  if (module->kernels.empty()) user_error(SourceLocation::at(file, 0, 0), file, " holds no kernel");
  std::vector<Kernel> kernels;
  for (const auto& k : module->kernels) kernels.emplace_back(module, k.get());
  return kernels;
}

nb::list params_of(const Kernel& kernel) {
  nb::list out;
  for (const auto& param : kernel.op().region(0)->arguments()) {
    const ir::Type& t = param->type();
    nb::dict d;
    d["name"] = param->name();
    d["kind"] = t.is_tensor() ? "tensor" : "scalar";
    d["dtype"] = std::string(ir::to_string(t.element()));
    d["type"] = t.str();
    if (t.is_tensor()) {
      nb::list shape;
      for (const ir::Extent& e : t.shape()) {
        if (e.is_static()) {
          shape.append(e.value);
        } else {
          shape.append(e.symbol);
        }
      }
      d["shape"] = shape;
    }
    out.append(d);
  }
  return out;
}

bool has_gpu() {
  try {
    runtime::context();
    return true;
  } catch (const UserError&) {
    return false;
  }
}

}  // namespace

void register_kernel(nb::module_& m) {
  nb::class_<Kernel>(m, "Kernel",
                     "One kernel of a tile program. Call it with tensors: on the GPU when they "
                     "are in device memory, in the CPU interpreter when they are in host memory.")
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("sizes", [](const Kernel& k) { return k.op().signature().sizes; })
      .def_prop_ro("facts",
                   [](const Kernel& k) {
                     std::vector<std::pair<std::string, int64_t>> out;
                     for (const ir::Fact& f : k.op().signature().facts)
                       out.emplace_back(f.symbol, f.divisor);
                     return out;
                   })
      .def_prop_ro("params", &params_of)
      .def_prop_ro("source_ir", &Kernel::source_ir)
      .def_prop_ro("compiled", &Kernel::compiled)
      .def(
          "compile",
          [](Kernel& k, const std::string& target, const std::string& arch, bool cubin,
             bool use_cache, const std::string& cache_dir, const std::vector<std::string>& passes,
             const std::vector<std::string>& nvrtc_flags,
             const std::map<std::string, int64_t>& size_hints) {
            k.compile(
                {target, arch, cubin, use_cache, cache_dir, passes, nvrtc_flags, size_hints});
          },
          "target"_a = "", "arch"_a = "", "cubin"_a = true, "use_cache"_a = true,
          "cache_dir"_a = "", "passes"_a = std::vector<std::string>{},
          "nvrtc_flags"_a = std::vector<std::string>{},
          "size_hints"_a = std::map<std::string, int64_t>{})
      .def_prop_ro("cuda_source",
                   [](const Kernel& k) { return k.compiled_kernel().cuda_source(); })
      .def_prop_ro("lowered_ir", [](const Kernel& k) { return k.compiled_kernel().lowered_ir(); })
      .def_prop_ro("cache_key", [](const Kernel& k) { return k.compiled_kernel().cache_key(); })
      .def_prop_ro("arch", [](const Kernel& k) { return k.compiled_kernel().arch(); })
      .def_prop_ro("has_cubin",
                   [](const Kernel& k) { return !k.compiled_kernel().cubin().empty(); })
      .def_prop_ro("launch_info",
                   [](const Kernel& k) {
                     const auto& e = k.compiled_kernel().emitted();
                     nb::dict d;
                     d["entry"] = e.entry;
                     d["threads"] = e.threads;
                     d["cluster"] = e.cluster;
                     d["dynamic_shared_bytes"] = e.dynamic_shared_bytes;
                     return d;
                   })
      .def_prop_ro("compile_times",
                   [](const Kernel& k) {
                     const CompileTimes& t = k.compiled_kernel().times();
                     nb::dict d;
                     d["pipeline_ms"] = t.pipeline_ms;
                     d["emit_ms"] = t.emit_ms;
                     d["nvrtc_ms"] = t.nvrtc_ms;
                     d["total_ms"] = t.total_ms;
                     d["cache_hit"] = t.cache_hit;
                     d["from_disk"] = t.from_disk;
                     return d;
                   })
      .def(
          "grid",
          [](const Kernel& k, const std::map<std::string, int64_t>& sizes, int64_t sm_count) {
            return as_launch_errors([&] { return interp::grid_extents(k.op(), sizes, sm_count); });
          },
          "sizes"_a, "sm_count"_a = 132, "The block grid for these sizes.")
      .def("__call__", &Kernel::call,
           "kernel(*args, stream=None): launches on device tensors (on `stream`, else torch's "
           "current stream), or interprets on host arrays, written in place.")
      .def("interpret", &Kernel::interpret, "args"_a, "schedule"_a = "", "sm_count"_a = 3,
           "Runs the CPU interpreter on host arrays (numpy, CPU tensors), written in place.")
      .def("benchmark", &Kernel::benchmark, "args"_a, "warmup"_a = 25, "iterations"_a = 100,
           "Device-event times of launches on these device tensors, in ms.")
      .def("_launch_repeatedly", &Kernel::launch_repeatedly, "args"_a, "count"_a,
           "`count` launches from C++ with no Python in between (launch-overhead baseline).")
      .def("__repr__", [](const Kernel& k) {
        return "<tessel.Kernel @" + k.name() + (k.compiled() ? " compiled>" : ">");
      });
}

}  // namespace tessel::python

NB_MODULE(_tessel, m) {
  using namespace tessel;
  using namespace tessel::python;
  // Kernels registered as torch custom ops (tessel.torch_op) stay referenced by torch's operator
  // registry until the interpreter exits, after nanobind's leak check runs: on the H100 every
  // script that registered one ended with "nanobind: leaked 2 instances ... of type Kernel".
  nb::set_leak_warnings(false);
  register_errors(m);
  register_kernel(m);
  register_variants(m);
  register_builder(m);
  m.def("parse", &python::parse, "text"_a, "file"_a = "<text>",
        "Parses and verifies tile IR text: a list of Kernels (CompileError on bad text).");
  m.def("has_gpu", &has_gpu, "Whether a CUDA device can be used (the driver loads, a device exists).");
  m.def("native_arch", [] { return native_arch(); }, "NVRTC's architecture for device 0 (needs a GPU).");
  m.def("synchronize", [] { as_launch_errors([] { runtime::context().synchronize(); }); },
        "Waits for the device; asynchronous kernel faults raise LaunchError.");
  m.def("default_cache_dir", [] { return runtime::KernelCache::default_directory(); },
        "Where compiled kernels are cached ($TESSEL_CACHE_DIR, else ~/.cache/tessel).");
}
