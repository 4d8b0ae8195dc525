#include "bench/harness/grouped_gemm_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "bench/harness/cublas_baseline.h"
#include "bench/harness/gemm_bench.h"
#include "bench/harness/gemm_kernels.h"
#include "bench/harness/report.h"
#include "compile/compile.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/numerics.h"
#include "runtime/timing.h"
#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

using ir::ScalarKind;

// The inputs of one grouped problem set on the device, and what the check needs on the host.
struct Grouped {
  std::vector<int> rows;           // M_g
  std::vector<int> ends;           // cumulative
  int64_t total = 0;               // sum M_g
  std::vector<std::uint8_t> a, b;  // f16 bits, row-major
  runtime::DeviceBuffer da, db, dc, dends, dref, pa, pb, pc;
};

double f16_row_dot(const std::vector<float>& x, const std::vector<float>& y) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += static_cast<double>(x[i]) * y[i];
  return s;
}

std::vector<float> row(const std::vector<std::uint8_t>& bits, int64_t index, int k) {
  const size_t bytes = static_cast<size_t>(k) * 2;
  return runtime::to_floats(runtime::HostFloat::f16,
                            std::span<const std::uint8_t>(bits.data() + index * bytes, bytes));
}

BenchRecord bench_one(CompiledKernel& kernel, const std::string& name, const GemmShape& shape,
                      const GroupedBenchOptions& o, CublasBaseline& cublas) {
  const int G = o.groups, N = shape.n, K = shape.k;
  const std::uint64_t seed = runtime::fresh_seed();
  std::mt19937_64 rng(seed);
  Grouped p;
  for (int g = 0; g < G; ++g) {
    p.rows.push_back(static_cast<int>(std::uniform_int_distribution<int>(1, shape.m)(rng)));
    p.total += p.rows.back();
    p.ends.push_back(static_cast<int>(p.total));
  }
  const int64_t M = p.total;
  p.a = runtime::random_values(runtime::HostFloat::f16, static_cast<size_t>(M) * K, seed + 1);
  p.b = runtime::random_values(runtime::HostFloat::f16, static_cast<size_t>(G) * N * K, seed + 2);
  p.da = runtime::DeviceBuffer::from_host(p.a);
  p.db = runtime::DeviceBuffer::from_host(p.b);
  const size_t c_bytes = static_cast<size_t>(M) * N * 2;
  p.dc = runtime::DeviceBuffer(c_bytes);
  p.dc.fill_bytes(0xff);  // poison: NaN
  p.dref = runtime::DeviceBuffer(c_bytes);
  p.dref.fill_bytes(0xff);
  p.dends = runtime::DeviceBuffer(static_cast<size_t>(G) * 4);
  p.dends.upload(p.ends.data(), p.ends.size() * 4);
  // cuBLAS's pointer arrays: group g's A rows, B matrix and C rows.
  std::vector<CUdeviceptr> pa, pb, pc;
  for (int g = 0; g < G; ++g) {
    const int64_t first = p.ends[g] - p.rows[g];
    pa.push_back(p.da.ptr() + static_cast<size_t>(first) * K * 2);
    pb.push_back(p.db.ptr() + static_cast<size_t>(g) * N * K * 2);
    pc.push_back(p.dref.ptr() + static_cast<size_t>(first) * N * 2);
  }
  p.pa = runtime::DeviceBuffer(G * sizeof(CUdeviceptr));
  p.pa.upload(pa.data(), G * sizeof(CUdeviceptr));
  p.pb = runtime::DeviceBuffer(G * sizeof(CUdeviceptr));
  p.pb.upload(pb.data(), G * sizeof(CUdeviceptr));
  p.pc = runtime::DeviceBuffer(G * sizeof(CUdeviceptr));
  p.pc.upload(pc.data(), G * sizeof(CUdeviceptr));
  GroupedProblems problems{p.rows, N, K, p.pa.ptr(), p.pb.ptr(), p.pc.ptr()};

  std::vector<KernelArg> args = {TensorArg{p.da.ptr(), {M, K}, ScalarKind::f16},
                                 TensorArg{p.db.ptr(), {G, N, K}, ScalarKind::f16},
                                 TensorArg{p.dc.ptr(), {M, N}, ScalarKind::f16},
                                 TensorArg{p.dends.ptr(), {G}, ScalarKind::i32}};
  runtime::Stream stream;
  kernel.launch(args, stream.handle());
  const bool grouped_library = cublas.has_grouped();
  auto library_grouped = [&](CUstream s) { cublas.gemm_grouped(GemmElement::f16, problems, s); };
  auto library_loop = [&](CUstream s) {
    for (int g = 0; g < G; ++g) {
      cublas.gemm_abt(GemmElement::f16, pa[g], pb[g], pc[g], p.rows[g], N, K, s);
    }
  };
  if (grouped_library) {
    library_grouped(stream.handle());
  } else {
    library_loop(stream.handle());
  }
  stream.synchronize();
  std::vector<std::uint8_t> got(c_bytes), want(c_bytes);
  p.dc.download(got.data(), c_bytes);
  p.dref.download(want.data(), c_bytes);
  // Every element against cuBLAS (a write into another group's rows shows here; so does an
  // element left poisoned), and sampled entries against float64.
  std::vector<float> out = runtime::to_floats(runtime::HostFloat::f16, got);
  std::vector<float> lib = runtime::to_floats(runtime::HostFloat::f16, want);
  const double vs_library = runtime::relative_error(out, lib);
  out.clear();
  lib.clear();
  std::vector<float> sampled;
  std::vector<double> reference;
  std::mt19937_64 pick(seed + 3);
  for (int s = 0; s < 4096; ++s) {
    // Half the samples in each group's last rows, where windows clip.
    int64_t r;
    int g = static_cast<int>(pick() % G);
    if (s % 2) {
      r = p.ends[g] - 1 - static_cast<int64_t>(pick() % std::min(p.rows[g], 8));
    } else {
      r = static_cast<int64_t>(pick() % M);
      g = static_cast<int>(std::upper_bound(p.ends.begin(), p.ends.end(), r) - p.ends.begin());
    }
    const int c = static_cast<int>(pick() % N);
    reference.push_back(f16_row_dot(row(p.a, r, K), row(p.b, static_cast<int64_t>(g) * N + c, K)));
    sampled.push_back(runtime::to_floats(
        runtime::HostFloat::f16,
        std::span<const std::uint8_t>(got.data() + (static_cast<size_t>(r) * N + c) * 2, 2))[0]);
  }
  BenchRecord r;
  r.name = name;
  r.dtype = "f16";
  r.shape = std::to_string(G) + "g*" + shape.str();
  r.rel_err = runtime::relative_error(sampled, reference);
  r.rel_err_vs_baseline = vs_library;
  r.passed = r.rel_err <= 5e-3 && vs_library <= 1e-2;
  if (!r.passed) {
    std::fprintf(stderr, "check failed for %s %s: rel_err %.3e, vs cuBLAS %.3e, seed %llu\n",
                 name.c_str(), r.shape.c_str(), r.rel_err, vs_library,
                 static_cast<unsigned long long>(seed));
  }
  auto launch = [&](CUstream s) { kernel.launch(args, s); };
  const double flops = 2.0 * static_cast<double>(M) * N * K;
  auto [mine, library] = runtime::time_interleaved(
      launch, grouped_library ? std::function<void(CUstream)>(library_grouped) : library_loop,
      o.warmup, o.iterations, stream.handle());
  auto [mine_again, loop] =
      runtime::time_interleaved(launch, library_loop, o.warmup, o.iterations, stream.handle());
  r.ms = mine.median_ms;
  r.tflops = flops / (r.ms * 1e-3) / 1e12;
  r.baseline = grouped_library ? "cublasGemmGroupedBatchedEx" : "cublasGemmEx loop";
  r.baseline_ms = library.median_ms;
  r.baseline_tflops = flops / (r.baseline_ms * 1e-3) / 1e12;
  r.ratio = r.baseline_ms / r.ms;
  r.extra = {{"groups", std::to_string(G)},
             {"rows", std::to_string(M)},
             {"loop_baseline", json_string("cublasGemmEx loop")},
             {"loop_ms", json_number(loop.median_ms)},
             {"ms_beside_loop", json_number(mine_again.median_ms)},
             {"ratio_vs_loop", json_number(loop.median_ms / mine_again.median_ms)},
             {"seed", std::to_string(seed)}};
  std::printf(
      "  %-22s %.4f ms  %.1f TFLOP/s  (%s %.4f ms)  ratio %.3f;  loop of cublasGemmEx "
      "%.4f ms, ratio %.3f  rel_err %.2e  vs cuBLAS %.2e%s\n",
      r.shape.c_str(), r.ms, r.tflops, r.baseline.c_str(), r.baseline_ms, r.ratio, loop.median_ms,
      loop.median_ms / mine_again.median_ms, r.rel_err, vs_library, r.passed ? "" : "  FAILED");
  return r;
}

}  // namespace

int run_grouped_gemm_bench(const GroupedBenchOptions& o) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string reason;
  if (!runtime::gpu_available(&reason)) {
    user_error(SourceLocation::unknown(), "tessel bench gemm --groups needs a GPU: ", reason);
  }
  Provenance provenance = collect_provenance(o.command);
  std::cout << "device: " << provenance.device << "   commit: " << provenance.commit << "\n";
  CublasBaseline cublas;
  if (!cublas.has_grouped()) {
    std::printf("cuBLAS has no cublasGemmGroupedBatchedEx: the baseline is a loop of GemmEx\n");
  }
  int failures = 0;
  std::vector<BenchRecord> records;
  for (const std::string& spec : o.kernels) {
    std::string name;
    std::unique_ptr<ir::Module> module = load_gemm_kernel(spec, &name);
    CompileOptions options;
    options.nvrtc_arch = native_arch();
    CompiledKernel kernel =
        compile(*module->kernels.front(), target::cuda::Target::named("sm_90a"), options);
    std::printf("%s: compiled in %.1f ms\n", name.c_str(), kernel.times().total_ms);
    for (const GemmShape& shape : parse_gemm_shapes(o.shapes)) {
      try {
        BenchRecord r = bench_one(kernel, name, shape, o, cublas);
        failures += r.passed ? 0 : 1;
        records.push_back(std::move(r));
      } catch (const std::exception& e) {
        std::printf("  %s: FAILED: %s\n", shape.str().c_str(), e.what());
        ++failures;
      }
    }
  }
  print_table(records);
  if (!o.json.empty()) write_json(o.json, records, provenance);
  return failures ? 1 : 0;
}

}  // namespace tessel::bench
