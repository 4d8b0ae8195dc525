// `tessel tune`: measures the variants of one kernel at the given shapes and records the fastest
// of each in the tuning cache (src/compile/variants.h), where KernelVariants::launch finds it.
#include <iostream>
#include <map>
#include <random>

#include "compile/variants.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"

namespace tessel::tool {
namespace {

// "M=16,N=4096,K=4096": one whole shape, every value positive.
std::map<std::string, int64_t> parse_shape(const std::string& text) {
  std::map<std::string, int64_t> sizes;
  parse_sizes(text, sizes);
  for (const auto& [name, value] : sizes) {
    if (value <= 0) {
      user_error(SourceLocation::unknown(), "tune: --size expects NAME=VALUE pairs with positive ",
                 "values, got '", name, "=", value, "'");
    }
  }
  return sizes;
}

int run_tune(const std::vector<std::string>& args) {
  std::vector<std::map<std::string, int64_t>> shapes;
  int64_t warmup = 10, iterations = 30;
  std::vector<std::string> files =
      OptionParser("tune")
          .value("--size", [&](const std::string& text) { shapes.push_back(parse_shape(text)); })
          .integer("--warmup", warmup, 0)
          .integer("--iterations", iterations, 1)
          .parse(args);
  if (files.empty()) user_error(SourceLocation::unknown(), "tune needs the variants' files");
  if (shapes.empty()) user_error(SourceLocation::unknown(), "tune needs at least one --size");
  std::vector<std::unique_ptr<ir::Module>> modules;
  std::vector<CompiledKernel> compiled;
  std::vector<std::string> names;
  std::vector<std::optional<GemmTraits>> traits;
  std::vector<std::optional<AttentionTraits>> attention;
  // Every file is read and checked before the GPU is asked for anything.
  for (const std::string& file : files) {
    modules.push_back(ir::parse_module(read_input_file(file), file));
    ir::verify(*modules.back());
    if (modules.back()->kernels.empty())
      user_error(SourceLocation::unknown(), file, " holds no kernel");
  }
  CompileOptions options;
  options.nvrtc_arch = native_arch();
  for (size_t f = 0; f < files.size(); ++f) {
    const std::string& file = files[f];
    const ir::Operation& kernel = *modules[f]->kernels.front();
    std::string target = "sm_90a";
    ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
      if (op->kind() == ir::OpKind::block_grid && op->has_attr("target"))
        target = op->str_attr("target");
    });
    compiled.push_back(compile(kernel, target::cuda::Target::named(target), options));
    traits.push_back(gemm_traits(kernel));
    attention.push_back(attention_traits(kernel));
    // The file's stem names the variant (variants of one kernel often keep its name inside).
    std::string stem =
        file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
    if (stem.size() > 4 && stem.substr(stem.size() - 4) == ".tir") stem.resize(stem.size() - 4);
    names.push_back(stem);
  }
  KernelVariants variants(std::move(compiled), names, TuningCache(), traits, attention);
  std::cout << "tune: " << variants.size() << " variant(s) of " << names[0] << " (family "
            << variants.family() << ") on " << tuning_device() << ", cache "
            << TuningCache().directory() << "\n";
  const ir::Operation& kernel = *modules.front()->kernels.front();
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  runtime::Stream stream;
  for (const auto& sizes : shapes) {
    std::vector<runtime::DeviceBuffer> buffers;
    std::vector<KernelArg> launch_args;
    for (const auto& param : kernel.region(0)->arguments()) {
      const ir::Type& t = param->type();
      if (!t.is_tensor()) {
        if (ir::is_float(t.element())) {
          launch_args.emplace_back(1.0);
        } else {
          launch_args.emplace_back(int64_t{1});
        }
        continue;
      }
      interp::HostTensor host(t.element(), interp::concrete_shape(t, sizes));
      for (int64_t i = 0; i < host.size(); ++i) host.set_float(i, real(rng));
      buffers.emplace_back(std::max<size_t>(host.bytes().size(), 16));
      buffers.back().upload(host.bytes().data(), host.bytes().size());
      launch_args.emplace_back(TensorArg{buffers.back().ptr(), host.shape(), host.element()});
    }
    const size_t modelled =
        variants.model_choice(variants.variant(0).bind(launch_args), runtime::context().sm_count());
    std::cout << "tune " << variants.shape_class(launch_args) << ": the cost model picks "
              << variants.name(modelled) << "\n";
    auto timings = variants.tune(launch_args, stream.handle(), static_cast<int>(warmup),
                                 static_cast<int>(iterations),
                                 [](const std::string& line) { std::cout << line << std::endl; });
    const size_t chosen = variants.choose(launch_args);
    std::cout << "tune " << variants.shape_class(launch_args) << ": chose " << variants.name(chosen)
              << " (" << timings[chosen].median_ms * 1000.0 << " us)\n";
  }
  return 0;
}

const bool registered = register_command(
    {"tune", "measure a kernel's variants at given shapes and record the fastest",
     "usage: tessel tune FILE.tir... --size M=..,N=..,K=.. [--size ...] [--warmup N]\n"
     "                   [--iterations N]\n"
     "  Compiles each file's first kernel (the variants of one kernel: the same tensors and\n"
     "  scalars in the same order, e.g. a tile program and copies that pin another tile,\n"
     "  split_k or clusters), then for each --size (one whole shape) times every variant on\n"
     "  random inputs (device events, the median of --iterations after --warmup launches),\n"
     "  prints one line per variant as it is measured, and records the fastest in the tuning\n"
     "  cache (<kernel cache>/tuning, keyed by the variants, the device and the sizes), where\n"
     "  a launch through KernelVariants (C++) finds it. Needs a GPU.",
     &run_tune});

}  // namespace
}  // namespace tessel::tool
