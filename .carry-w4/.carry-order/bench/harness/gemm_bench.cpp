#include "bench/harness/gemm_bench.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>

#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/numerics.h"
#include "runtime/timing.h"
#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

runtime::HostFloat host_format(GemmElement element) {
  return element == GemmElement::f16 ? runtime::HostFloat::f16 : runtime::HostFloat::bf16;
}

// Entries checked against float64: every corner (edges of ragged shapes are where bugs live), then
// random ones.
std::vector<std::pair<int, int>> sample_entries(const GemmShape& shape, std::uint64_t seed) {
  std::vector<std::pair<int, int>> entries = {
      {0, 0}, {0, shape.n - 1}, {shape.m - 1, 0}, {shape.m - 1, shape.n - 1}};
  std::mt19937_64 generator(seed);
  for (int i = 0; i < 2048; ++i) {
    entries.emplace_back(static_cast<int>(generator() % shape.m),
                         static_cast<int>(generator() % shape.n));
  }
  return entries;
}

double sampled_error(const std::vector<float>& c, const std::vector<float>& a,
                     const std::vector<float>& b, const GemmShape& shape,
                     const std::vector<std::pair<int, int>>& entries) {
  std::vector<float> out;
  std::vector<double> ref;
  for (auto [i, j] : entries) {
    double sum = 0;
    const float* row_a = &a[static_cast<std::size_t>(i) * shape.k];
    const float* row_b = &b[static_cast<std::size_t>(j) * shape.k];
    for (int p = 0; p < shape.k; ++p) sum += static_cast<double>(row_a[p]) * row_b[p];
    ref.push_back(sum);
    out.push_back(c[static_cast<std::size_t>(i) * shape.n + j]);
  }
  return runtime::relative_error(std::span<const float>(out), std::span<const double>(ref));
}

}  // namespace

std::string GemmShape::str() const {
  std::string mnk = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  return batch > 1 ? std::to_string(batch) + "*" + mnk : mnk;
}

std::vector<GemmShape> parse_gemm_shapes(const std::string& text) {
  std::vector<GemmShape> shapes;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    int values[3] = {0, 0, 0};
    std::size_t position = 0;
    for (int d = 0; d < 3; ++d) {
      const char* first = item.data() + position;
      const char* last = item.data() + item.size();
      auto [next, error] = std::from_chars(first, last, values[d]);
      bool separator_ok = d == 2 ? next == last : (next != last && *next == 'x');
      if (error != std::errc() || values[d] <= 0 || !separator_ok) {
        user_error(SourceLocation::at("--shapes", 0, static_cast<int>(start + position) + 1),
                   "bad GEMM shape '", item, "': expected MxNxK with positive integers");
      }
      position = static_cast<std::size_t>(next - item.data()) + 1;
    }
    shapes.push_back({values[0], values[1], values[2]});
    start = end + 1;
  }
  return shapes;
}

double gemm_tolerance(GemmElement element) {
  return element == GemmElement::f16 ? 2e-3 : 6e-3;
}

BenchRecord bench_gemm(const GemmBenchOptions& options, const GemmShape& shape,
                       const GemmLauncher& launch, CublasBaseline& cublas) {
  runtime::HostFloat format = host_format(options.element);
  const std::size_t a_count = static_cast<std::size_t>(shape.m) * shape.k;
  const std::size_t b_count = static_cast<std::size_t>(shape.n) * shape.k;
  const std::size_t c_count = static_cast<std::size_t>(shape.m) * shape.n;
  std::uint64_t seed = runtime::fresh_seed();
  auto a_bytes = runtime::random_values(format, a_count, seed);
  auto b_bytes = runtime::random_values(format, b_count, seed ^ 0x5bd1e995);
  runtime::DeviceBuffer a = runtime::DeviceBuffer::from_host(a_bytes);
  runtime::DeviceBuffer b = runtime::DeviceBuffer::from_host(b_bytes);
  runtime::DeviceBuffer c(c_count * 2), c_library(c_count * 2);
  c.fill_bytes(0xff);  // NaN in f16 and bf16: an element the kernel does not write fails the check
  c_library.fill_bytes(0xff);
  runtime::Stream stream;

  launch(a.ptr(), b.ptr(), c.ptr(), shape.m, shape.n, shape.k, stream.handle());
  cublas.gemm_abt(options.element, a.ptr(), b.ptr(), c_library.ptr(), shape.m, shape.n, shape.k,
                  stream.handle());
  stream.synchronize();
  auto out = runtime::to_floats(format, c.to_host<std::uint8_t>());
  auto library = runtime::to_floats(format, c_library.to_host<std::uint8_t>());
  auto a_values = runtime::to_floats(format, a_bytes);
  auto b_values = runtime::to_floats(format, b_bytes);
  auto entries = sample_entries(shape, seed);

  BenchRecord record;
  record.name = options.name;
  record.dtype = to_string(options.element);
  record.shape = shape.str();
  record.baseline = "cublas";
  record.rel_err = sampled_error(out, a_values, b_values, shape, entries);
  record.rel_err_vs_baseline =
      runtime::relative_error(std::span<const float>(out), std::span<const float>(library));
  double library_error = sampled_error(library, a_values, b_values, shape, entries);
  record.passed = record.rel_err <= gemm_tolerance(options.element) &&
                  record.rel_err_vs_baseline <= 2 * gemm_tolerance(options.element);
  if (!record.passed) {
    std::fprintf(stderr,
                 "check failed for %s %s: rel_err %.3e (cuBLAS's own %.3e), vs cuBLAS %.3e, "
                 "seed %llu\n",
                 options.name.c_str(), record.shape.c_str(), record.rel_err, library_error,
                 record.rel_err_vs_baseline, static_cast<unsigned long long>(seed));
  }

  auto [mine, library_timing] = runtime::time_interleaved(
      [&](CUstream s) { launch(a.ptr(), b.ptr(), c.ptr(), shape.m, shape.n, shape.k, s); },
      [&](CUstream s) {
        cublas.gemm_abt(options.element, a.ptr(), b.ptr(), c_library.ptr(), shape.m, shape.n,
                        shape.k, s);
      },
      options.warmup, options.iterations, stream.handle());
  double flops = 2.0 * shape.m * shape.n * static_cast<double>(shape.k);
  record.ms = mine.median_ms;
  record.baseline_ms = library_timing.median_ms;
  record.tflops = flops / (record.ms * 1e-3) / 1e12;
  record.baseline_tflops = flops / (record.baseline_ms * 1e-3) / 1e12;
  record.ratio = record.baseline_ms / record.ms;
  return record;
}

}  // namespace tessel::bench
