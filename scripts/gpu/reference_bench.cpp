// Measures the reference GEMM through the product path (NVRTC-compiled tessel_reference, the
// bench harness of bench/harness with cuBLAS in the same process), and the NVRTC cold-compile and
// cache-hit times. A device-run helper until `tessel bench gemm-reference` lands; built by the
// scratch subset build (scripts/gpu/device_run.sh).
//   reference_bench [--dtype f16|bf16] [--cluster 1|2] [--overlap 0|1] [--group G] [--iterations N]
//   [--warmup N]
//                   [--json FILE] [--compile-times] MxNxK[,MxNxK...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/harness/cublas_baseline.h"
#include "bench/harness/gemm_bench.h"
#include "bench/harness/report.h"
#include "bench/reference/reference_gemm.h"
#include "runtime/compiler.h"
#include "runtime/context.h"
#include "support/diagnostics.h"

using namespace tessel;

int main(int argc, char** argv) {
  try {
    std::string dtype = "f16", json, shapes_text;
    int cluster = 2, group = 8, iterations = 30, warmup = 10;
    bool overlap = false;
    bool compile_times = false;
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--dtype")
        dtype = argv[++i];
      else if (a == "--cluster")
        cluster = std::atoi(argv[++i]);
      else if (a == "--group")
        group = std::atoi(argv[++i]);
      else if (a == "--iterations")
        iterations = std::atoi(argv[++i]);
      else if (a == "--json")
        json = argv[++i];
      else if (a == "--compile-times")
        compile_times = true;
      else if (a == "--overlap")
        overlap = std::atoi(argv[++i]) != 0;
      else
        shapes_text = a;
    }
    if (compile_times) {
      // A truly cold compile: the kernel source with a unique comment appended, so that no cache
      // (tessel's, or any below it) has seen it; then the ReferenceGemm path twice in a fresh
      // cache directory (a cold compile that stores, then a cache hit).
      auto dir =
          std::filesystem::temp_directory_path() / ("tessel-cache-" + std::to_string(::getpid()));
      setenv("TESSEL_CACHE_DIR", dir.c_str(), 1);
      runtime::CompileOptions unique;
      unique.name = "reference_gemm_kernel.cu";
      unique.use_cache = false;
      auto fresh = runtime::compile_cuda(
          reference::reference_gemm_source() + "\n// nonce " + std::to_string(::getpid()) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n",
          unique);
      reference::ReferenceGemm first(reference::GemmType::f16);
      reference::ReferenceGemm second(reference::GemmType::f16);
      std::printf(
          "nvrtc reference GEMM (6 entry points, cubin %zu bytes): unique-source compile %.1f ms; "
          "ReferenceGemm in a fresh cache dir %.1f ms (cache_hit=%d), then %.1f ms "
          "(cache_hit=%d)\n",
          fresh.cubin.size(), fresh.milliseconds, first.compile_result().milliseconds,
          first.compile_result().cache_hit, second.compile_result().milliseconds,
          second.compile_result().cache_hit);
      std::filesystem::remove_all(dir);
    }
    if (shapes_text.empty()) return 0;
    const auto type = dtype == "bf16" ? reference::GemmType::bf16 : reference::GemmType::f16;
    reference::ReferenceGemm gemm(type, {cluster, group, overlap});
    bench::CublasBaseline cublas;
    bench::GemmBenchOptions options;
    options.name = "gemm-reference";
    options.element = dtype == "bf16" ? bench::GemmElement::bf16 : bench::GemmElement::f16;
    options.iterations = iterations;
    options.warmup = warmup;
    std::vector<bench::BenchRecord> records;
    for (const auto& shape : bench::parse_gemm_shapes(shapes_text)) {
      records.push_back(bench::bench_gemm(
          options, shape,
          [&](CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n, int k, CUstream s) {
            gemm.run(a, b, c, m, n, k, s);
          },
          cublas));
      std::fflush(stdout);
    }
    bench::print_table(records);
    if (!json.empty()) bench::write_json(json, records, bench::collect_provenance(command));
    for (const auto& r : records) {
      if (!r.passed) return 1;
    }
    return 0;
  } catch (const UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
