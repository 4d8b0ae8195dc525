#include "bench/harness/memory_bench.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>

#include "bench/harness/memory_kernels.h"
#include "bench/harness/report.h"
#include "runtime/compiler.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/module.h"
#include "runtime/timing.h"
#include "support/command_line.h"
#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

// The baseline: every thread copies 16-byte words, grid-stride. Reads and writes `bytes` each.
constexpr const char* kCopySource = R"(
extern "C" __global__ void __launch_bounds__(256) copy16(const uint4* __restrict__ src,
                                                         uint4* __restrict__ dst, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) dst[i] = src[i];
}
)";

// For context only (the fractions are against copy16): 4 independent 16-byte words per thread per
// step, to show how close copy16 is to what a copy can reach.
constexpr const char* kCopy4Source = R"(
extern "C" __global__ void __launch_bounds__(256) copy16x4(const uint4* __restrict__ src,
                                                           uint4* __restrict__ dst, long long n) {
  long long stride = 256ll * gridDim.x;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) if (i + j * stride < n) v[j] = src[i + j * stride];
#pragma unroll
    for (int j = 0; j < 4; ++j) if (i + j * stride < n) dst[i + j * stride] = v[j];
  }
}
)";

// Read-only context for GEMV (which only reads): 16-byte words summed per thread; one word is
// written per thread only if the sum hits a value the all-ones fill never makes (kept live).
constexpr const char* kReadSource = R"(
extern "C" __global__ void __launch_bounds__(256) read16(const uint4* __restrict__ src,
                                                         uint4* __restrict__ dst, long long n) {
  unsigned s = 0;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    uint4 v = src[i];
    s += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (s == 0x12345u) dst[blockIdx.x * 256 + threadIdx.x] = make_uint4(s, s, s, s);
}
)";

}  // namespace

int run_memory_bench(const std::vector<std::string>& args) {
  int64_t rows = 8192, cols = 8192;
  // Short by default (8192x8192 f16 is 128 MiB per pass): the whole list must finish well inside a
  // device command's limit.
  int iterations = 30, warmup = 5;
  std::string json, shape;
  std::vector<std::string> kernels = memory_kernel_names();
  std::vector<std::string> positional = OptionParser("bench")
                                            .value("--shape", shape)
                                            .integer("--iterations", iterations, 1)
                                            .integer("--warmup", warmup, 1)
                                            .value("--json", json)
                                            .list("--kernels", kernels)
                                            .parse(args);
  if (!positional.empty()) {
    user_error(SourceLocation::unknown(), "bench memory-bound: unexpected argument '",
               positional[0], "'");
  }
  if (!shape.empty() &&
      (std::sscanf(shape.c_str(), "%ldx%ld", &rows, &cols) != 2 || rows <= 0 || cols <= 0)) {
    user_error(SourceLocation::unknown(), "bad shape '", shape, "': expected RxC");
  }
  // Line-buffered, so that rows printed before a timeout or a crash are not lost in a pipe.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string reason;
  if (!runtime::gpu_available(&reason)) {
    user_error(SourceLocation::unknown(), "tessel bench needs a GPU: ", reason);
  }
  std::ostringstream command;
  command << "tessel bench memory-bound";
  for (const std::string& a : args) command << " " << a;
  Provenance provenance = collect_provenance(command.str());
  std::cout << "device: " << provenance.device << "   commit: " << provenance.commit << "\n";

  runtime::Module copy_module = runtime::Module::load(runtime::compile_cuda(kCopySource).cubin);
  runtime::Function copy = copy_module.function("copy16");
  runtime::Stream stream;
  std::ofstream out;
  if (!json.empty()) out.open(json, std::ios::app);
  {
    // copy16 vs copy16x4 on rows x cols f16 (read once, written once).
    runtime::Module copy4_module = runtime::Module::load(runtime::compile_cuda(kCopy4Source).cubin);
    runtime::Function copy4 = copy4_module.function("copy16x4");
    int64_t bytes = rows * cols * 2, words = bytes / 16;
    runtime::DeviceBuffer a(words * 16), b(words * 16);
    a.fill_bytes(1);
    CUdeviceptr pa = a.ptr(), pb = b.ptr();
    long long n = words;
    void* copy_args[] = {&pa, &pb, &n};
    runtime::LaunchConfig config;
    config.grid.x = static_cast<unsigned>(runtime::context().sm_count() * 8);
    config.block.x = 256;
    config.stream = stream.handle();
    auto [t1, t4] = runtime::time_interleaved([&](CUstream) { copy.launch(config, copy_args); },
                                              [&](CUstream) { copy4.launch(config, copy_args); },
                                              warmup, iterations, stream.handle());
    runtime::Module read_module = runtime::Module::load(runtime::compile_cuda(kReadSource).cubin);
    runtime::Function read = read_module.function("read16");
    auto [tc, tr] = runtime::time_interleaved([&](CUstream) { copy.launch(config, copy_args); },
                                              [&](CUstream) { read.launch(config, copy_args); },
                                              warmup, iterations, stream.handle());
    std::printf(
        "baselines at %ldx%ld f16: copy16 %.1f GB/s, copy16x4 %.1f GB/s (read+write); read16 "
        "%.1f GB/s (read only)\n",
        rows, cols, 2.0 * bytes / t1.median_ms / 1e6, 2.0 * bytes / t4.median_ms / 1e6,
        bytes / tr.median_ms / 1e6);
    (void)tc;
  }
  std::printf("%-16s %-12s %10s %10s %10s %10s %9s %10s\n", "kernel", "shape", "ms", "GB/s",
              "copy ms", "copy GB/s", "fraction", "rel_err");
  int failures = 0;
  for (const std::string& kernel : kernels) {
    // A kernel that fails to compile or launch is reported and counted; the others still run.
    std::unique_ptr<MemoryCase> holder;
    try {
      holder = std::make_unique<MemoryCase>(kernel, rows, cols, 7);
      holder->run();
    } catch (const std::exception& e) {
      std::printf("%-10s FAILED: %s\n", kernel.c_str(), e.what());
      ++failures;
      continue;
    }
    MemoryCase& c = *holder;
    std::string name = c.name();
    // Checked on every 32nd row at large sizes (the GPU tests check every row on ragged shapes).
    c.check_every_nth_row(rows >= 1024 ? 32 : 1);
    double err = c.relative_error();
    bool ok = err < 5e-3;
    failures += ok ? 0 : 1;
    // The copy moves the same bytes: half read, half written.
    int64_t words = c.ideal_bytes() / 2 / 16;
    runtime::DeviceBuffer a(words * 16), b(words * 16);
    a.fill_bytes(1);
    CUdeviceptr pa = a.ptr(), pb = b.ptr();
    long long n = words;
    void* copy_args[] = {&pa, &pb, &n};
    runtime::LaunchConfig config;
    config.grid.x = static_cast<unsigned>(runtime::context().sm_count() * 8);
    config.block.x = 256;
    auto [kt, ct] = runtime::time_interleaved([&](CUstream s) { c.launch(s); },
                                              [&](CUstream s) {
                                                config.stream = s;
                                                copy.launch(config, copy_args);
                                              },
                                              warmup, iterations, stream.handle());
    double gbs = c.ideal_bytes() / kt.median_ms / 1e6,
           copy_gbs = c.ideal_bytes() / ct.median_ms / 1e6;
    std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
    std::printf("%-16s %-12s %10.4f %10.1f %10.4f %10.1f %9.3f %10.2e%s\n", name.c_str(),
                shape.c_str(), kt.median_ms, gbs, ct.median_ms, copy_gbs, gbs / copy_gbs, err,
                ok ? "" : "  FAILED");
    if (out) {
      out << "{\"name\":\"" << name << "\",\"dtype\":\"f16\",\"shape\":\"" << shape
          << "\",\"ms\":" << kt.median_ms << ",\"gbps\":" << gbs
          << ",\"baseline\":\"copy16\",\"baseline_ms\":" << ct.median_ms
          << ",\"baseline_gbps\":" << copy_gbs << ",\"fraction\":" << gbs / copy_gbs
          << ",\"rel_err\":" << err << ",\"passed\":" << (ok ? "true" : "false") << ",\"date\":\""
          << provenance.date << "\",\"device\":\"" << provenance.device << "\",\"commit\":\""
          << provenance.commit << "\",\"command\":\"" << provenance.command << "\"}\n";
    }
  }
  // Host launch overhead of a compiled kernel: argument checks, grid evaluation and
  // cuLaunchKernelEx, on a tiny problem. Launches go in batches of 100 with a synchronize between
  // (untimed), so that the launch queue never fills and the device never holds the host back; a
  // raw cuLaunchKernel of the copy kernel is timed the same way, for comparison.
  {
    MemoryCase tiny("bias_gelu", 8, 512, 3);
    tiny.run();
    runtime::DeviceBuffer a(4096), b(4096);
    CUdeviceptr pa = a.ptr(), pb = b.ptr();
    long long n = 256;
    void* copy_args[] = {&pa, &pb, &n};
    runtime::LaunchConfig config;
    config.grid.x = 1;
    config.block.x = 256;
    config.stream = stream.handle();
    auto per_launch_us = [&](const std::function<void()>& launch) {
      constexpr int kBatches = 50, kBatch = 100;
      std::vector<double> samples;
      for (int batch = 0; batch < kBatches; ++batch) {
        stream.synchronize();
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < kBatch; ++i) launch();
        samples.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count() /
            kBatch);
      }
      stream.synchronize();
      return runtime::median(samples);
    };
    double compiled_us = per_launch_us([&] { tiny.launch(stream.handle()); });
    double raw_us = per_launch_us([&] { copy.launch(config, copy_args); });
    std::printf(
        "host launch overhead (median of 50 batches of 100): CompiledKernel::launch (bias_gelu "
        "8x512) %.2f us; raw launch of the copy kernel %.2f us\n",
        compiled_us, raw_us);
    if (out) {
      out << "{\"name\":\"launch_overhead\",\"compiled_us\":" << compiled_us
          << ",\"raw_us\":" << raw_us << ",\"date\":\"" << provenance.date << "\",\"device\":\""
          << provenance.device << "\",\"commit\":\"" << provenance.commit << "\",\"command\":\""
          << provenance.command << "\"}\n";
    }
  }
  return failures ? 1 : 0;
}

}  // namespace tessel::bench
