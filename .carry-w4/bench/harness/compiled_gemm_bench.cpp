#include "bench/harness/compiled_gemm_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "bench/harness/cublas_baseline.h"
#include "bench/harness/cublaslt_baseline.h"
#include "bench/harness/gemm_bench.h"
#include "bench/harness/gemm_kernels.h"
#include "bench/harness/grouped_gemm_bench.h"
#include "bench/harness/report.h"
#include "compile/compile.h"
#include "compile/variants.h"
#include "interp/interpreter.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/numerics.h"
#include "runtime/timing.h"
#include "support/command_line.h"
#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

using ir::ScalarKind;

struct Options {
  std::vector<std::string> kernels = default_gemm_kernels();
  std::string shapes = kDefaultGemmShapes;
  std::string dtype = "all";
  // nn | nt | tn | tt | all: C = op(A) op(B) on row-major data, n for an operand used as stored
  // (A [M,K], B [K,N]) and t for one used transposed (A [K,M], B [N,K]), as BLAS names them.
  std::string layout = "all";
  std::string json;
  int iterations = 50;
  int warmup = 10;
  int batch = 1;   // --batch: problems per launch, for batched kernels
  int groups = 0;  // --groups: a grouped GEMM (grouped_gemm_bench.h) over this many groups
  bool compile_only = false;
  // Lowered IR to compile instead of the kernel's own lowering (checked and timed as the kernel
  // it replaces, which must take the same parameters): a hand-written or hand-edited variant.
  std::string lowered;
};

Options parse(const std::vector<std::string>& args) {
  Options o;
  std::vector<std::string> positional = OptionParser("bench")
                                            .list("--kernels", o.kernels)
                                            .value("--shapes", o.shapes)
                                            .value("--dtype", o.dtype)
                                            .value("--layout", o.layout)
                                            .value("--json", o.json)
                                            .integer("--iterations", o.iterations, 1)
                                            .integer("--warmup", o.warmup, 1)
                                            .integer("--batch", o.batch, 1)
                                            .integer("--groups", o.groups, 1)
                                            .value("--lowered", o.lowered)
                                            .flag("--compile-only", o.compile_only)
                                            .parse(args);
  if (!positional.empty()) {
    user_error(SourceLocation::unknown(), "bench gemm: unexpected argument '", positional[0], "'");
  }
  if (o.kernels.empty()) user_error(SourceLocation::unknown(), "--kernels lists no kernel");
  if (o.layout != "nn" && o.layout != "nt" && o.layout != "tn" && o.layout != "tt" &&
      o.layout != "all") {
    user_error(SourceLocation::unknown(), "--layout must be nn, nt, tn, tt or all, not '", o.layout,
               "'");
  }
  // Without --kernels, a layout picks its example kernels.
  if (o.layout != "all" && std::find(args.begin(), args.end(), "--kernels") == args.end() &&
      std::none_of(args.begin(), args.end(),
                   [](const std::string& a) { return a.rfind("--kernels=", 0) == 0; })) {
    o.kernels = o.layout == "nt"   ? std::vector<std::string>{"gemm", "gemm_bf16"}
                : o.layout == "nn" ? std::vector<std::string>{"gemm_nn"}
                : o.layout == "tn" ? std::vector<std::string>{"gemm_tn"}
                                   : std::vector<std::string>{"gemm_tt"};
  }
  if (o.dtype != "f16" && o.dtype != "bf16" && o.dtype != "all") {
    user_error(SourceLocation::unknown(), "--dtype must be f16, bf16 or all, not '", o.dtype, "'");
  }
  return o;
}

runtime::HostFloat host_float(ScalarKind kind, const std::string& what) {
  switch (kind) {
    case ScalarKind::f16:
      return runtime::HostFloat::f16;
    case ScalarKind::bf16:
      return runtime::HostFloat::bf16;
    case ScalarKind::f32:
      return runtime::HostFloat::f32;
    default:
      user_error(SourceLocation::unknown(), "tessel bench gemm: ", what, " has element type ",
                 ir::to_string(kind), "; the bench fills and reads f16, bf16 and f32 tensors");
  }
}

size_t element_bytes(ScalarKind kind) {
  return kind == ScalarKind::f32 ? 4 : 2;
}

// One compiled kernel: its analysis, and the compile times measured on the way.
struct GemmCase {
  std::string name, target;
  std::string nvrtc_arch;  // where the cubin loads: the device's own arch on a GPU
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<ir::Module> lowered;  // --lowered: compiled instead of `module`
  std::unique_ptr<GemmKernelInfo> info;
  std::unique_ptr<CompiledKernel> compiled;
  // A spec `a.tir+b.tir+...`: variants of one kernel (the first is `module`), tuned at each shape
  // and launched through KernelVariants (src/compile/variants.h).
  std::vector<std::unique_ptr<ir::Module>> variant_modules;
  std::vector<std::string> variant_names;
  std::unique_ptr<KernelVariants> variants;
  double compile_ms = 0, hit_ms = 0;
  bool first_was_cached = false;
  CompileTimes first;
};

// Reads the kernel of `spec` and what the bench needs to know about it (no compile yet).
GemmCase load_case(const std::string& spec) {
  GemmCase c;
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t plus = spec.find('+', start);
    parts.push_back(spec.substr(start, plus == std::string::npos ? plus : plus - start));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  c.module = load_gemm_kernel(parts[0], &c.name);
  if (parts.size() > 1) {
    c.variant_names.push_back(c.name);
    for (size_t i = 1; i < parts.size(); ++i) {
      std::string name;
      c.variant_modules.push_back(load_gemm_kernel(parts[i], &name));
      c.variant_names.push_back(name);
      c.name += "+" + name;
    }
  }
  const ir::Operation& kernel = *c.module->kernels.front();
  c.info = std::make_unique<GemmKernelInfo>(kernel);
  c.target = gemm_target_name(kernel, c.name);
  return c;
}

// Compiles it (cold, or from the disk cache when an earlier process filled it), then again: the
// in-process cache.
// On a GPU the cubin is built for the device (an sm_80-path kernel runs on the H100 as sm_90a code
// using sm_80's instructions); without one, for the target itself.
void compile_case(GemmCase& c, bool for_device) {
  const ir::Operation& kernel =
      c.lowered ? *c.lowered->kernels.front() : *c.module->kernels.front();
  target::cuda::Target target = target::cuda::Target::named(c.target);
  CompileOptions options;
  if (c.lowered) options.passes = {"verify"};
  if (for_device) options.nvrtc_arch = native_arch();
  c.nvrtc_arch = options.nvrtc_arch.empty() ? c.target : options.nvrtc_arch;
  c.compiled = std::make_unique<CompiledKernel>(compile(kernel, target, options));
  c.first = c.compiled->times();
  c.compile_ms = c.first.total_ms;
  c.first_was_cached = c.first.cache_hit;
  CompiledKernel again = compile(kernel, target, options);
  c.hit_ms = again.times().total_ms;
  if (!c.variant_modules.empty()) {
    std::vector<CompiledKernel> all = {*c.compiled};
    std::vector<std::optional<GemmTraits>> traits = {gemm_traits(kernel)};
    for (const auto& m : c.variant_modules) {
      all.push_back(compile(*m->kernels.front(), target, options));
      traits.push_back(gemm_traits(*m->kernels.front()));
    }
    c.variants = std::make_unique<KernelVariants>(std::move(all), c.variant_names, TuningCache(),
                                                  std::move(traits));
  }
}

void launch_case(GemmCase& c, const std::vector<KernelArg>& args, CUstream stream) {
  if (c.variants) {
    c.variants->launch(args, stream);
  } else {
    c.compiled->launch(args, stream);
  }
}

void print_compile(const GemmCase& c) {
  std::string where =
      c.target == c.nvrtc_arch ? c.target : c.target + ", cubin for " + c.nvrtc_arch;
  std::printf("%s (%s): %s\n", c.name.c_str(), where.c_str(), c.info->describe().c_str());
  std::printf(
      "  compile %.1f ms (%s: passes %.1f, emit %.1f, NVRTC %.1f ms); again in this process "
      "%.3f ms\n",
      c.compile_ms, c.first_was_cached ? "cubin from the disk cache" : "cold", c.first.pipeline_ms,
      c.first.emit_ms, c.first.nvrtc_ms, c.hit_ms);
}

// cuBLASLt with its fused bias + ReLU epilogue, made on first use; without it (not loadable),
// bias + ReLU GEMMs are compared with plain cuBLAS, as the other GEMMs.
struct FusedBaseline {
  std::unique_ptr<CublasLtBiasRelu> lt;
  bool tried = false;
  CublasLtBiasRelu* get() {
    if (!tried) {
      tried = true;
      try {
        lt = std::make_unique<CublasLtBiasRelu>();
      } catch (const std::exception& e) {
        std::printf("  cuBLASLt unavailable (%s): bias + ReLU compared with plain cuBLAS\n",
                    e.what());
      }
    }
    return lt.get();
  }
};

// check_gemm over each problem of a batched GEMM (A, B and the outputs lead with the batch; the
// epilogue's other inputs are shared): the worst figures of all problems.
GemmCheck check_batches(const GemmKernelInfo& info, const GemmShape& shape,
                        const std::vector<std::vector<float>>& values,
                        const std::vector<std::vector<float>>& products,
                        const std::vector<std::vector<float>>& outputs, std::uint64_t seed) {
  const GemmRoles& roles = info.roles();
  auto slice = [](const std::vector<float>& all, int i, int batch) {
    const size_t per = all.size() / static_cast<size_t>(batch);
    return std::vector<float>(all.begin() + i * per, all.begin() + (i + 1) * per);
  };
  GemmCheck worst;
  for (int i = 0; i < shape.batch; ++i) {
    std::vector<std::vector<float>> v(values.size()), p, o;
    for (int in : roles.inputs) v[in] = values[in];
    v[roles.a] = slice(values[roles.a], i, shape.batch);
    for (int b : roles.b) v[b] = slice(values[b], i, shape.batch);
    for (const auto& x : products) p.push_back(slice(x, i, shape.batch));
    for (const auto& x : outputs) o.push_back(slice(x, i, shape.batch));
    GemmCheck one = check_gemm(info, shape, v, p, o, seed + 104729 * i);
    // NaN (a poisoned output left unwritten) must win over any number.
    auto worse = [](double a, double b) { return std::isnan(b) || b > a ? b : a; };
    worst.rel_err = worse(worst.rel_err, one.rel_err);
    worst.rel_err_vs_library = worse(worst.rel_err_vs_library, one.rel_err_vs_library);
    worst.library_rel_err = worse(worst.library_rel_err, one.library_rel_err);
  }
  return worst;
}

BenchRecord bench_case(GemmCase& c, const GemmShape& shape, const Options& o,
                       CublasBaseline& cublas, FusedBaseline& fused_baseline) {
  const ir::Operation& kernel = *c.module->kernels.front();
  const ir::Block& body = *kernel.region(0);
  const GemmRoles& roles = c.info->roles();
  const int products = c.info->products();
  GemmElement element = roles.element == ScalarKind::f16 ? GemmElement::f16 : GemmElement::bf16;
  host_float(roles.element, "A");  // a UserError for element types the bench cannot fill
  std::map<std::string, int64_t> sizes = {
      {roles.m, shape.m}, {roles.n, shape.n}, {roles.k, shape.k}};
  const bool batched = !roles.batch.empty();
  if (batched) sizes[roles.batch] = shape.batch;
  const int batch = shape.batch;
  const int64_t mn = static_cast<int64_t>(shape.m) * shape.n;
  std::uint64_t seed = runtime::fresh_seed();

  // Every tensor parameter: random contents for inputs, poison (all bits set: NaN) for outputs.
  std::vector<runtime::DeviceBuffer> device(body.arguments().size());
  std::vector<std::vector<float>> host(body.arguments().size());  // decoded inputs
  std::vector<KernelArg> args;
  for (int p = 0; p < static_cast<int>(body.arguments().size()); ++p) {
    const ir::Type& t = body.argument(p)->type();
    std::vector<int64_t> extents = interp::concrete_shape(t, sizes);
    int64_t count = 1;
    for (int64_t e : extents) count *= e;
    bool output = std::find(roles.outputs.begin(), roles.outputs.end(), p) != roles.outputs.end();
    runtime::HostFloat format = host_float(t.element(), "%" + body.argument(p)->name());
    if (output) {
      device[p] = runtime::DeviceBuffer(std::max<size_t>(count * element_bytes(t.element()), 16));
      device[p].fill_bytes(0xff);
    } else {
      auto bytes = runtime::random_values(format, static_cast<size_t>(count), seed + 7919 * p);
      device[p] = runtime::DeviceBuffer::from_host(bytes);
      host[p] = runtime::to_floats(format, bytes);
    }
    args.emplace_back(TensorArg{device[p].ptr(), extents, t.element()});
  }
  runtime::Stream stream;
  // Variants: each timed on these arguments, the fastest recorded for the shape and launched
  // from here on (the check below is of the chosen one).
  std::string tuned;
  if (c.variants) {
    for (const auto& t : c.variants->tune(args, stream.handle(), 3, 10)) {
      tuned += (tuned.empty() ? "" : ", ") + t.variant + " " + std::to_string(t.median_ms);
    }
  }
  launch_case(c, args, stream.handle());
  // The reference products, in f32 (cuBLAS rounds nothing before the epilogue replays); one
  // call per problem of a batch.
  std::vector<runtime::DeviceBuffer> reference;
  const size_t bytes = element_bytes(roles.element);
  const size_t a_stride = static_cast<size_t>(shape.m) * shape.k * bytes,
               b_stride = static_cast<size_t>(shape.n) * shape.k * bytes;
  for (int p = 0; p < products; ++p) {
    reference.emplace_back(static_cast<size_t>(mn) * batch * 4);
    for (int i = 0; i < batch; ++i) {
      cublas.gemm(element, device[roles.a].ptr() + i * a_stride, roles.a_k_major,
                  device[roles.b[p]].ptr() + i * b_stride, roles.b_k_major,
                  reference.back().ptr() + static_cast<size_t>(i) * mn * 4, shape.m, shape.n,
                  shape.k, stream.handle(), true);
    }
  }
  stream.synchronize();
  std::vector<std::vector<float>> product_values;
  for (const auto& r : reference) product_values.push_back(r.to_host<float>());
  std::vector<std::vector<float>> outputs;
  for (int out : roles.outputs) {
    ScalarKind kind = body.argument(out)->type().element();
    std::vector<std::uint8_t> stored(static_cast<size_t>(mn) * batch * element_bytes(kind));
    device[out].download(stored.data(), stored.size());
    outputs.push_back(runtime::to_floats(host_float(kind, "an output"), stored));
  }
  // A bias + ReLU GEMM is timed against cuBLASLt's fused epilogue, whose own output is checked
  // on the samples too (a baseline computing something else would make the ratio meaningless).
  int bias = c.info->bias_relu_input();
  CublasLtBiasRelu* fused = bias >= 0 && !batched ? fused_baseline.get() : nullptr;
  std::vector<std::vector<float>> fused_outputs;
  if (fused != nullptr) {
    try {
      fused->prepare(element, shape.m, shape.n, shape.k);
      runtime::DeviceBuffer out(static_cast<size_t>(mn) * 2);
      out.fill_bytes(0xff);
      fused->run(device[roles.a].ptr(), device[roles.b[0]].ptr(), device[bias].ptr(), out.ptr(),
                 stream.handle());
      stream.synchronize();
      fused_outputs.push_back(
          runtime::to_floats(host_float(roles.element, "A"), out.to_host<std::uint8_t>()));
    } catch (const std::exception& e) {
      std::printf("  cuBLASLt bias + ReLU failed (%s): compared with plain cuBLAS\n", e.what());
      fused = nullptr;
    }
  }
  GemmCheck check = batched ? check_batches(*c.info, shape, host, product_values, outputs, seed)
                            : check_gemm(*c.info, shape, host, product_values, outputs, seed,
                                         fused != nullptr ? &fused_outputs : nullptr);
  BenchRecord record;
  record.name = c.name;
  record.dtype = to_string(element);
  record.shape = shape.str();
  record.baseline = fused != nullptr ? "cublasLt"
                    : batched        ? "cublasGemmStridedBatchedEx"
                    : products == 1  ? "cublas"
                                     : "cublas x" + std::to_string(products);
  if (fused != nullptr && !(check.baseline_rel_err <= gemm_tolerance(element))) {
    std::printf("  warning: cuBLASLt's bias + ReLU output is off (rel_err %.3e vs float64)\n",
                check.baseline_rel_err);
  }
  record.rel_err = check.rel_err;
  record.rel_err_vs_baseline = check.rel_err_vs_library;
  double library_err = check.library_rel_err;
  double tolerance = gemm_tolerance(element);
  record.passed = record.rel_err <= tolerance && record.rel_err_vs_baseline <= 2 * tolerance;
  if (!record.passed) {
    std::fprintf(stderr,
                 "check failed for %s %s: rel_err %.3e (cuBLAS + epilogue: %.3e), vs cuBLAS + "
                 "epilogue %.3e, seed %llu\n",
                 c.name.c_str(), record.shape.c_str(), record.rel_err, library_err,
                 record.rel_err_vs_baseline, static_cast<unsigned long long>(seed));
  }
  product_values.clear();
  reference.clear();

  // Timing: the kernel and cuBLAS (one GemmEx per product, output in the input type; or cuBLASLt
  // with the fused bias + ReLU), launch by launch.
  std::vector<runtime::DeviceBuffer> scratch;
  for (int p = 0; p < products; ++p) scratch.emplace_back(static_cast<size_t>(mn) * batch * 2);
  auto [mine, library_timing] = runtime::time_interleaved(
      [&](CUstream s) { launch_case(c, args, s); },
      [&](CUstream s) {
        if (fused != nullptr) {
          fused->run(device[roles.a].ptr(), device[roles.b[0]].ptr(), device[bias].ptr(),
                     scratch[0].ptr(), s);
          return;
        }
        for (int p = 0; p < products; ++p) {
          if (batched) {
            cublas.gemm_batched(element, device[roles.a].ptr(), roles.a_k_major,
                                device[roles.b[p]].ptr(), roles.b_k_major, scratch[p].ptr(),
                                shape.m, shape.n, shape.k, batch, s);
          } else {
            cublas.gemm(element, device[roles.a].ptr(), roles.a_k_major, device[roles.b[p]].ptr(),
                        roles.b_k_major, scratch[p].ptr(), shape.m, shape.n, shape.k, s);
          }
        }
      },
      o.warmup, o.iterations, stream.handle());
  double flops = 2.0 * products * batch * shape.m * shape.n * static_cast<double>(shape.k);
  record.ms = mine.median_ms;
  record.baseline_ms = library_timing.median_ms;
  record.tflops = flops / (record.ms * 1e-3) / 1e12;
  record.baseline_tflops = flops / (record.baseline_ms * 1e-3) / 1e12;
  record.ratio = record.baseline_ms / record.ms;
  record.extra = {{"layout", json_string(gemm_layout(roles))},
                  {"target", json_string(c.target)},
                  {"nvrtc_arch", json_string(c.nvrtc_arch)},
                  {"epilogue", json_string(c.info->describe())},
                  {"compile_ms", json_number(c.compile_ms)},
                  {"compile_cached", c.first_was_cached ? "true" : "false"},
                  {"compile_hit_ms", json_number(c.hit_ms)},
                  {"min_ms", json_number(mine.min_ms)},
                  {"baseline_min_ms", json_number(library_timing.min_ms)},
                  {"baseline_epilogue", json_string(fused != nullptr ? "bias+relu" : "none")}};
  if (c.variants) {
    record.extra.emplace_back("chosen", json_string(c.variants->name(c.variants->choose(args))));
    record.extra.emplace_back("model_choice", json_string(c.variants->name(c.variants->model_choice(
                                                  sizes, runtime::context().sm_count()))));
    record.extra.emplace_back("tuned_ms", json_string(tuned));
  }
  if (fused != nullptr)
    record.extra.emplace_back("baseline_rel_err", json_number(check.baseline_rel_err));
  return record;
}

// Host launch overhead of a compiled GEMM: CompiledKernel::launch (argument checks, the grid,
// TMA descriptors, cuLaunchKernelEx) on a one-tile problem, in 50 batches of 100 launches with a
// synchronize between batches (untimed) so that the queue never fills; the median per launch, in
// us.
double launch_overhead_us(GemmCase& c) {
  const ir::Block& body = *c.module->kernels.front()->region(0);
  const GemmRoles& roles = c.info->roles();
  std::map<std::string, int64_t> sizes = {{roles.m, 128}, {roles.n, 256}, {roles.k, 64}};
  if (!roles.batch.empty()) sizes[roles.batch] = 1;
  std::vector<runtime::DeviceBuffer> buffers;
  std::vector<KernelArg> args;
  for (const auto& param : body.arguments()) {
    std::vector<int64_t> extents = interp::concrete_shape(param->type(), sizes);
    int64_t count = 1;
    for (int64_t e : extents) count *= e;
    buffers.emplace_back(static_cast<size_t>(count) * element_bytes(param->type().element()));
    buffers.back().fill_bytes(0);
    args.emplace_back(TensorArg{buffers.back().ptr(), extents, param->type().element()});
  }
  runtime::Stream stream;
  std::vector<double> samples;
  for (int batch = 0; batch < 51; ++batch) {
    stream.synchronize();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) launch_case(c, args, stream.handle());
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                    .count() /
                100;
    if (batch > 0) samples.push_back(us);  // the first batch loads the module
  }
  stream.synchronize();
  return runtime::median(samples);
}

}  // namespace

std::vector<std::string> default_gemm_kernels() {
  return {"gemm", "gemm_bf16"};
}

int run_gemm_bench(const std::vector<std::string>& args) {
  Options o = parse(args);
  if (o.groups > 0) {
    GroupedBenchOptions g;
    const bool named = std::any_of(args.begin(), args.end(), [](const std::string& a) {
      return a.rfind("--kernels", 0) == 0;
    });
    g.kernels = named ? o.kernels : std::vector<std::string>{"gemm_grouped"};
    const bool shaped = std::any_of(
        args.begin(), args.end(), [](const std::string& a) { return a.rfind("--shapes", 0) == 0; });
    g.shapes = shaped ? o.shapes : "4096x4096x4096";
    g.groups = o.groups;
    g.iterations = o.iterations;
    g.warmup = o.warmup;
    g.json = o.json;
    g.command = "tessel bench gemm";
    for (const std::string& a : args) g.command += " " + a;
    if (o.batch > 1)
      user_error(SourceLocation::unknown(), "--groups and --batch exclude each other");
    return run_grouped_gemm_bench(g);
  }
  std::vector<GemmShape> shapes = parse_gemm_shapes(o.shapes);
  for (GemmShape& shape : shapes) shape.batch = o.batch;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows survive a timeout in a pipe
  std::string reason;
  bool gpu = runtime::gpu_available(&reason);
  if (!gpu && !o.compile_only) {
    user_error(SourceLocation::unknown(), "tessel bench needs a GPU: ", reason,
               " (tessel bench gemm --compile-only runs without one)");
  }
  std::ostringstream command;
  command << "tessel bench gemm";
  for (const std::string& a : args) command << " " << a;
  std::unique_ptr<CublasBaseline> cublas;
  Provenance provenance;
  if (!o.compile_only) {
    provenance = collect_provenance(command.str());
    std::cout << "device: " << provenance.device << "   commit: " << provenance.commit << "\n";
    cublas = std::make_unique<CublasBaseline>();
  }
  int failures = 0, ran = 0;
  std::vector<BenchRecord> records;
  std::vector<std::pair<std::string, double>> overheads;  // kernel, us per launch
  FusedBaseline fused_baseline;
  for (const std::string& spec : o.kernels) {
    GemmCase c;
    try {
      c = load_case(spec);
      std::string dtype(ir::to_string(c.info->roles().element));
      if (o.dtype != "all" && dtype != o.dtype) continue;
      if (o.layout != "all" && gemm_layout(c.info->roles()) != o.layout) continue;
      if (dtype != "f16" && dtype != "bf16") {
        user_error(SourceLocation::unknown(), "cuBLAS baselines take f16 or bf16 inputs, not ",
                   dtype);
      }
      if (o.batch > 1 && c.info->roles().batch.empty()) {
        user_error(SourceLocation::unknown(), "--batch ", o.batch, ": ", c.name,
                   " is not a batched GEMM (its A is not [L,M,K])");
      }
      ++ran;
      if (!o.lowered.empty()) {
        std::string lowered_name;
        c.lowered = load_gemm_kernel(o.lowered, &lowered_name);
        c.name += "+" + lowered_name;
      }
      compile_case(c, !o.compile_only);
    } catch (const std::exception& e) {
      std::printf("%s: FAILED: %s\n", spec.c_str(), e.what());
      ++failures;
      continue;
    }
    print_compile(c);
    if (o.compile_only) continue;
    for (const GemmShape& shape : shapes) {
      try {
        BenchRecord r = bench_case(c, shape, o, *cublas, fused_baseline);
        failures += r.passed ? 0 : 1;
        std::printf("  %-14s %.4f ms  %.1f TFLOP/s  (%s %.4f ms)  ratio %.3f  rel_err %.2e%s\n",
                    r.shape.c_str(), r.ms, r.tflops, r.baseline.c_str(), r.baseline_ms, r.ratio,
                    r.rel_err, r.passed ? "" : "  FAILED");
        for (const auto& [key, value] : r.extra) {
          if (key == "chosen") std::printf("    chose %s\n", value.c_str());
          if (key == "model_choice") std::printf("    the cost model picks %s\n", value.c_str());
          if (key == "tuned_ms") std::printf("    tuned (ms): %s\n", value.c_str());
        }
        records.push_back(std::move(r));
      } catch (const std::exception& e) {
        std::string why = e.what();
        if (why.find("NO_BINARY_FOR_GPU") != std::string::npos) {
          why += " (a cubin for " + c.target + " does not load on " +
                 std::to_string(runtime::context().compute_capability()) +
                 ": SASS runs only within its major architecture)";
        }
        std::printf("  %s: FAILED: %s\n", shape.str().c_str(), why.c_str());
        ++failures;
      }
    }
    try {
      double us = launch_overhead_us(c);
      std::printf("  host launch overhead (128x256x64, median of 50 batches of 100): %.2f us\n",
                  us);
      overheads.emplace_back(c.name, us);
    } catch (const std::exception& e) {
      std::printf("  launch overhead: FAILED: %s\n", e.what());
      ++failures;
    }
  }
  if (ran == 0 && failures == 0) {
    std::string wanted = o.dtype == "all" ? "" : "element type " + o.dtype;
    if (o.layout != "all") wanted += (wanted.empty() ? "" : " and ") + ("layout " + o.layout);
    user_error(SourceLocation::unknown(), "tessel bench gemm: no kernel has ", wanted);
  }
  if (!o.compile_only) {
    print_table(records);
    if (!o.json.empty()) {
      write_json(o.json, records, provenance);
      std::ofstream out(o.json, std::ios::app);
      for (const auto& [kernel, us] : overheads) {
        out << "{\"name\": \"launch_overhead\", \"kernel\": " << json_string(kernel)
            << ", \"compiled_us\": " << json_number(us)
            << ", \"date\": " << json_string(provenance.date)
            << ", \"device\": " << json_string(provenance.device)
            << ", \"commit\": " << json_string(provenance.commit)
            << ", \"command\": " << json_string(provenance.command) << "}\n";
      }
    }
  }
  return failures ? 1 : 0;
}

}  // namespace tessel::bench
