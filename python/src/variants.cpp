#include "variants.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "compile/gemm_cost.h"
#include "errors.h"
#include "runtime/context.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessel::python {
namespace {

bool have_gpu() {
  try {
    runtime::context();
    return true;
  } catch (const UserError&) {
    return false;
  }
}

// "bench/kernel-variants/gemm_t128_split_k.tir" -> "gemm_t128_split_k"; empty unless a .tir file.
std::string file_stem(const std::string& path) {
  if (path.size() <= 4 || path.compare(path.size() - 4, 4, ".tir") != 0) return "";
  const size_t slash = path.find_last_of('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(start, path.size() - 4 - start);
}

// The kernels' names; where two kernels share one (a variant file keeps its original's kernel
// name, as bench/kernel-variants' do), the stems of the files they came from, as `tessel bench`
// names them. Still equal names are KernelVariants' error.
std::vector<std::string> default_names(const std::vector<Kernel*>& kernels) {
  std::vector<std::string> names;
  for (const Kernel* k : kernels) names.push_back(k->name());
  for (size_t i = 0; i < kernels.size(); ++i) {
    bool shared = false;
    for (size_t j = 0; j < kernels.size(); ++j)
      shared = shared || (j != i && names[j] == kernels[i]->name());
    if (!shared) continue;
    if (std::string stem = file_stem(kernels[i]->op().loc().file); !stem.empty()) names[i] = stem;
  }
  return names;
}

// The tessel.Kernel objects of `kernels` (TypeError naming `who` for anything else).
std::vector<Kernel*> kernel_list(nb::sequence kernels, const char* who) {
  std::vector<Kernel*> list;
  for (nb::handle h : kernels) {
    if (!nb::isinstance<Kernel>(h)) {
      throw nb::type_error((std::string(who) + " takes tessel.Kernel objects, got a " +
                            std::string(Py_TYPE(h.ptr())->tp_name))
                               .c_str());
    }
    list.push_back(nb::cast<Kernel*>(h));
  }
  return list;
}

}  // namespace

Variants::Variants(nb::sequence kernels, std::optional<std::vector<std::string>> names) {
  kernels_ = kernel_list(kernels, "tessel.Variants");
  for (nb::handle h : kernels) objects_.push_back(nb::borrow(h));
  if (kernels_.empty()) user_error(SourceLocation::unknown(), "tessel.Variants: no kernels given");
  // Compiled as a first launch would compile them: for the GPU, or without one only to CUDA text
  // (what the parameter check reads; a host call interprets the tile IR).
  const bool gpu = have_gpu();
  std::vector<CompiledKernel> compiled;
  std::vector<std::optional<GemmTraits>> traits;
  std::vector<std::optional<AttentionTraits>> attention;
  for (Kernel* k : kernels_) {
    if (!k->compiled()) {
      KernelOptions options;
      options.cubin = gpu;
      k->compile(options);
    }
    compiled.push_back(k->compiled_kernel());
    // The cost model's view of each variant, as `tessel bench gemm a.tir+b.tir` gives it.
    traits.push_back(gemm_traits(k->op()));
    attention.push_back(attention_traits(k->op()));
  }
  variants_.emplace(std::move(compiled), names ? *names : default_names(kernels_), TuningCache(),
                    std::move(traits), std::move(attention));
  arguments_.emplace(kernels_[0]->op(), "variants of @" + kernels_[0]->name());
}

size_t Variants::index_of(const std::string& name) const {
  std::string known;
  for (size_t i = 0; i < variants_->size(); ++i) {
    if (variants_->name(i) == name) return i;
    known += (known.empty() ? "" : ", ") + variants_->name(i);
  }
  launch_error(arguments_->label(), " has no variant ", name, " (it has ", known, ")");
}

size_t Variants::host_choice() const {
  return variants_->model_choice(arguments_->sizes(kernels_[0]->op()), kInterpreterSmCount);
}

void Variants::call(nb::args args, nb::kwargs kwargs) {
  nb::handle stream_arg;
  for (auto [key, value] : kwargs) {
    std::string k = nb::cast<std::string>(key);
    if (k != "stream") launch_error(arguments_->label(), ": unknown keyword argument '", k, "'");
    stream_arg = value;
  }
  if (arguments_->read(args) == Place::host) {
    if (stream_arg.is_valid() && !stream_arg.is_none())
      launch_error(arguments_->label(), ": stream= goes with device tensors");
    arguments_->interpret(kernels_[host_choice()]->op(), "", kInterpreterSmCount);
    return;
  }
  CUstream stream = static_cast<CUstream>(arguments_->stream_for(stream_arg));
  as_launch_errors([&] {
    arguments_->check_device();
    runtime::context().make_current();
    variants_->launch(arguments_->kernel_args(), stream);
  });
}

void Variants::interpret(nb::args args, const std::string& variant, const std::string& schedule,
                         int64_t sm_count) {
  if (arguments_->read(args) != Place::host) {
    launch_error(arguments_->label(),
                 ": the interpreter runs on host memory (numpy arrays, CPU "
                 "tensors); these tensors are on a GPU");
  }
  const size_t i = variant.empty()
                       ? variants_->model_choice(arguments_->sizes(kernels_[0]->op()), sm_count)
                       : index_of(variant);
  arguments_->interpret(kernels_[i]->op(), schedule, sm_count);
}

std::string Variants::choose(nb::args args) {
  if (arguments_->read(args) == Place::host) return variants_->name(host_choice());
  return as_launch_errors([&] {
    arguments_->check_device();
    runtime::context().make_current();
    return variants_->name(variants_->choose(arguments_->kernel_args()));
  });
}

std::string Variants::model_choice(const std::map<std::string, int64_t>& sizes,
                                   int64_t sm_count) const {
  return variants_->name(variants_->model_choice(sizes, sm_count));
}

std::vector<std::pair<std::string, double>> Variants::tune(nb::args args, int warmup,
                                                           int iterations, nb::handle progress) {
  if (arguments_->read(args) != Place::device) {
    launch_error(arguments_->label(),
                 ": tune() times launches on the GPU; pass device tensors "
                 "(on host arrays a call interprets the cost model's choice)");
  }
  CUstream stream = static_cast<CUstream>(arguments_->stream_for(nb::handle()));
  // The GIL stays held: the progress lines are Python calls, and the argument storage is shared
  // with every other call of this object.
  std::function<void(const std::string&)> report;
  if (progress.is_valid() && !progress.is_none() && !progress.is(Py_False)) {
    if (progress.is(Py_True)) {
      nb::object print = nb::module_::import_("builtins").attr("print");
      report = [print](const std::string& line) { print(line, "flush"_a = true); };
    } else {
      nb::object callback = nb::borrow(progress);
      report = [callback](const std::string& line) { callback(line); };
    }
  }
  std::vector<KernelVariants::Timing> timings = as_launch_errors([&] {
    arguments_->check_device();
    runtime::context().make_current();
    return variants_->tune(arguments_->kernel_args(), stream, warmup, iterations, report);
  });
  std::vector<std::pair<std::string, double>> out;
  for (const KernelVariants::Timing& t : timings) out.emplace_back(t.variant, t.median_ms);
  return out;
}

std::vector<std::string> Variants::names() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < variants_->size(); ++i) out.push_back(variants_->name(i));
  return out;
}

nb::list Variants::kernels() const {
  nb::list out;
  for (const nb::object& k : objects_) out.append(k);
  return out;
}

std::string Variants::repr() const {
  std::string text = "<tessel.Variants " + family() + ":";
  for (const std::string& name : names()) text += " " + name;
  return text + ">";
}

void register_variants(nb::module_& m) {
  nb::class_<Variants>(m, "Variants",
                       "Kernels with the same parameters called as one: on device tensors the "
                       "tuned variant for the sizes (else the GEMM cost model's, else the first) "
                       "launches; on host arrays the cost model's choice is interpreted.")
      .def(nb::init<nb::sequence, std::optional<std::vector<std::string>>>(), "kernels"_a,
           "names"_a = nb::none())
      .def("__call__", &Variants::call,
           "v(*args, stream=None): on device tensors, launches the variant the tuning cache names "
           "for these sizes on this GPU (else the GEMM cost model's choice for its SMs, else the "
           "first), on `stream` or torch's current stream. On host arrays (no device to tune "
           "for) interprets the cost model's choice at the interpreter's SM count (3), written in "
           "place.")
      .def("interpret", &Variants::interpret, "args"_a, "variant"_a = "", "schedule"_a = "",
           "sm_count"_a = kInterpreterSmCount,
           "Runs the CPU interpreter on host arrays: the variant named `variant`, else the cost "
           "model's choice at `sm_count` SMs.")
      .def("choose", &Variants::choose,
           "The name of the variant a call with these arguments runs (device tensors: tuned, "
           "else the cost model's; host arrays: the cost model's at the interpreter's SM count).")
      .def(
          "model_choice", &Variants::model_choice, "sizes"_a, "sm_count"_a = 132,
          "The GEMM cost model's choice at these sizes ({'M': .., 'N': .., 'K': ..}) on `sm_count` "
          "SMs; the first variant when a variant is not a GEMM the model knows.")
      .def("tune", &Variants::tune, "args"_a, "warmup"_a = 3, "iterations"_a = 10,
           "progress"_a = true,
           "Times every variant on these device tensors (outputs overwritten), records the fastest "
           "for their sizes on this GPU in the tuning cache, and returns [(name, median_ms)]. "
           "progress: True prints a line per variant, a callable gets it, False is silent.")
      .def_prop_ro("names", &Variants::names)
      .def_prop_ro("family", &Variants::family,
                   "The tuning cache's name for this set of variants (<tuning dir>/<family>.tsv).")
      .def_prop_ro("kernels", &Variants::kernels)
      .def("__len__", [](const Variants& v) { return v.names().size(); })
      .def("__repr__", &Variants::repr);
  m.def(
      "gemm_model_choice",
      [](nb::sequence kernels, const std::map<std::string, int64_t>& sizes, int64_t sm_count,
         std::optional<std::vector<std::string>> names) {
        const std::vector<Kernel*> list = kernel_list(kernels, "tessel.gemm_model_choice");
        if (list.empty())
          user_error(SourceLocation::unknown(), "tessel.gemm_model_choice: no kernels given");
        const std::vector<std::string> labels = names ? *names : default_names(list);
        if (labels.size() != list.size()) {
          user_error(SourceLocation::unknown(), "tessel.gemm_model_choice: ", list.size(),
                     " kernels but ", labels.size(), " names");
        }
        std::vector<std::optional<GemmTraits>> traits;
        for (Kernel* k : list) traits.push_back(gemm_traits(k->op()));
        return labels.at(gemm_model_choice(traits, sizes, sm_count));
      },
      "kernels"_a, "sizes"_a, "sm_count"_a = 132, "names"_a = nb::none(),
      "What Variants(kernels, names).model_choice(sizes, sm_count) returns, from the tile "
      "programs' GEMM traits alone: nothing is compiled.");
  m.def(
      "tuning_cache_dir", [] { return TuningCache().directory(); },
      "Where tuned choices are recorded (the kernel cache's `tuning` folder).");
}

}  // namespace tessel::python
