// `tessel bench SUITE`: runs tessel kernels against their library baselines in one process and
// prints a table (and JSON records for bench/results/).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "bench/harness/compiled_gemm_bench.h"
#include "bench/harness/cublas_baseline.h"
#include "bench/harness/gemm_bench.h"
#include "bench/harness/memory_bench.h"
#include "bench/harness/report.h"
#include "bench/harness/summary.h"
#include "bench/reference/reference_gemm.h"
#include "runtime/driver.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"
#include "tessel/python_benches.h"

namespace tessel::tool {
namespace {

constexpr const char* kUsage =
    "usage: tessel bench gemm [--kernels a,b.tir,...] [--shapes MxNxK,...] [--dtype f16|bf16|all]\n"
    "                         [--json FILE] [--iterations N] [--warmup N] [--compile-only]\n"
    "                         [--lowered FILE] [--batch L] [--groups G] [--layout "
    "nn|nt|tn|tt|all]\n"
    "\n"
    "Compiles GEMM kernels written in tile IR (names of examples/kernels, default gemm,gemm_bf16;\n"
    "or paths to .tir files) and runs each on every shape against cuBLAS in one process. The\n"
    "kernel's roles (A [M,K], B [N,K], outputs [M,N], epilogue inputs such as a bias [N]) and its\n"
    "epilogue are read from the kernel; the epilogue is replayed on the host over cuBLAS's f32\n"
    "products to check every output element, and over float64 products on sampled entries.\n"
    "Timing: the kernel and cuBLAS (one GemmEx per product, no epilogue; for C = relu(A·Bᵀ +\n"
    "bias) cuBLASLt with its fused RELU_BIAS epilogue) interleaved, medians;\n"
    "ratio = cuBLAS time / tessel time. Also prints compile times (cold, or the cubin from the\n"
    "disk cache; then an in-process hit) and each kernel's host launch overhead (128x256x64:\n"
    "argument checks, TMA descriptors, launch). --compile-only needs no GPU. --lowered FILE\n"
    "compiles that lowered IR (as given: passes = verify) in place of each kernel's own lowering,\n"
    "to check and time a hand-written variant against the same baselines. A kernel given as\n"
    "a.tir+b.tir+... is one kernel's variants (src/compile/variants.h): at each shape each is\n"
    "timed (tessel tune's measurement), the fastest is recorded in the tuning cache and checked\n"
    "and timed against the library as above (the record names it: \"chosen\").\n"
    "--groups G runs a grouped GEMM (default gemm_grouped: A [sum M_g,K], B [G,N,K], C [sum "
    "M_g,N],\n"
    "row ends [G]) over G groups of random M_g in 1..M of each --shapes MxNxK (default\n"
    "4096x4096x4096), checked against float64 and cuBLAS, timed against "
    "cublasGemmGroupedBatchedEx\n"
    "and against a loop of cublasGemmEx.\n"
    "--batch L runs batched kernels (A [L,M,K], B [L,N,K], C [L,M,N], e.g. gemm_batched) on L\n"
    "problems of each shape, checked problem by problem, against cublasGemmStridedBatchedEx.\n"
    "--layout keeps the kernels whose operands are stored that way (BLAS letters on row-major\n"
    "data: nt = A [M,K], B [N,K]; nn = B [K,N]; tn = A [K,M], B [K,N]; tt = A [K,M], B [N,K]);\n"
    "without --kernels it runs that layout's example (gemm and gemm_bf16 for nt, gemm_nn,\n"
    "gemm_tn, gemm_tt). The record's \"layout\" says which.\n"
    "Default shapes: 8192x8192x8192,8192x8192x4096,8191x4097x520.\n"
    "\n"
    "usage: tessel bench summary FILE.jsonl... [--svg PLOT.svg]\n"
    "Prints one table over the --json records of the gemm, gemm-reference and memory-bound "
    "suites,\n"
    "then per kernel the geometric mean and lowest ratio over its MxNxK shapes (a sweep's "
    "figures);\n"
    "--svg also plots each ratio against 2MNK (lines at 1.0 and 0.85).\n"
    "\n"
    "usage: tessel bench gemm-reference [--shapes MxNxK,...] [--dtype f16|bf16|all]\n"
    "                                   [--json FILE] [--iterations N] [--warmup N]\n"
    "\n"
    "Runs the hand-written reference GEMM (bench/reference) and cuBLAS on the same random inputs\n"
    "in one process. Each row: the shape, tessel's median time and TFLOP/s, cuBLAS's, their ratio\n"
    "(cuBLAS time / tessel time: above 1 is faster than cuBLAS) and the relative error against a\n"
    "float64 reference. --json appends one record per row (name, dtype, shape, ms, tflops,\n"
    "baseline, baseline_ms, ratio, rel_err, with date, device, commit and command).\n"
    "Default shapes: 8192x8192x8192,8192x8192x4096,4096x4096x4096,1000x1000x1000,8191x4097x520.\n"
    "Exit status 1 when any row fails its correctness check.\n"
    "\n"
    "usage: tessel bench memory-bound [--shape RxC] [--kernels a,b] [--iterations N] [--warmup N]\n"
    "                                 [--json FILE]\n"
    "Runs the tessel-compiled memory-bound kernels (examples/kernels: bias_gelu, softmax, "
    "rmsnorm,\n"
    "layernorm, gemv; default 8192x8192 f16) interleaved with a 16-byte copy kernel moving the\n"
    "same bytes; prints GB/s, the copy's GB/s, their fraction and the relative error.\n"
    "\n"
    "usage: tessel bench attention [--causal] [--shapes B,H,L,D[,HKV] ...] [--dtype f16|bf16]\n"
    "                              [--kernel FILE.tir] [--json FILE] [--iterations N]\n"
    "                              [--varlen L1,L2,... H] [--triton]\n"
    "                              [--variants FILE.tir ... [--tuned]]\n"
    "Runs the FlashAttention examples (examples/kernels/flash_attention*.tir, by head dim (64,\n"
    "128, 256) and --causal; HKV < H: the GQA kernel) against cuDNN and FlashAttention-2\n"
    "through PyTorch's scaled_dot_product_attention (SDPA backends) in one process: the suite is\n"
    "bench/python/attention.py of the source tree this tool was built from, run by python3 with\n"
    "the Python extension (<build>/python, else PYTHONPATH or an installed tessel) and torch.\n"
    "Default shapes 4,32,1024,128 4,32,4096,128 4,32,16384,128; ratio = SDPA time / tessel time.\n"
    "--varlen: one batch of sequences of lengths L1,L2,... with H heads (D = 128) through\n"
    "flash_attention_varlen*.tir, against torch's variable-length FlashAttention-2 and cuDNN on\n"
    "the padded batch. --triton: also a Triton FlashAttention-2 after the tutorial's algorithm.\n"
    "--variants: more kernels of the same parameters, each checked and timed in the same loop;\n"
    "--tuned: also tessel.Variants over the kernel and its variants, tuned at each shape (what a\n"
    "user's dispatcher launches), e.g. --variants\n"
    "bench/kernel-variants/attention/flash_attention_g1pp.tir --tuned (the ping-pong form,\n"
    "faster at short sequences).\n"
    "\n"
    "usage: tessel bench w4a16 [--shapes MxNxKgG,...] [--variants NAME,...] [--json FILE]\n"
    "                          [--iterations N] [--graph LAUNCHES [--sets S]]\n"
    "fp16 x int4 GEMM (examples/kernels/gemm_w4a16*.tir and their tile variants, names\n"
    "[tpscz]RxT[_kKT][_hH][_gs][_sk[S]][_bB][_wW][_pP][_stN][_ovMODE][_nt][_sg][_ul][_ns] as\n"
    "bench/python/w4a16.py's docstring gives them) against cuBLAS f16 on the dequantized weights\n"
    "and a copy of the packed weights, in one process: the suite is bench/python/w4a16.py, run as\n"
    "attention's is. --graph also times each as a CUDA graph of LAUNCHES launches rotating over S\n"
    "copies of the weights (no launch gaps). The fastest at M = 1-8 on the H200:\n"
    "c64x8_k256_h2_gs_w3_p1_st8_ovpreload (bench/results/2026-11-29-w4a16-scale-after-mma-h200.md).\n"
    "\n"
    "usage: tessel bench moe [--tokens T,...] [--experts E] [--top-k K] [--hidden H]\n"
    "                        [--intermediate I] [--group G] [--weights int4|fp8]\n"
    "                        [--variants t<T>[_r<R>][_b<B>][_s<S>],...] [--tuned] [--tessel-only]\n"
    "                        [--json FILE] [--iterations N] [--routing combine|gather]\n"
    "The MoE expert GEMM (examples/kernels/moe_w4a16.tir, moe_w8a16.tir with --weights fp8) over\n"
    "top-k routed tokens against a loop of cuBLAS GEMMs over the experts and torch._grouped_mm, in\n"
    "one process (bench/python/moe.py); --tuned adds tessel.Variants over the variants, tuned at\n"
    "each token count.\n"
    "  --routing combine: the down projection with the routing's weighted combine fused\n"
    "  (moe_w4a16_combine.tir) against the unfused kernel followed by PyTorch's combines and a\n"
    "  loop of cuBLAS GEMMs (bench/python/moe_combine.py); --routing gather: the up projection\n"
    "  reading the tokens through the routing (moe_w4a16_gather.tir) against index_select and\n"
    "  the unfused kernel (bench/python/moe_gather.py). Both take the layer's options, not\n"
    "  --weights, --tuned or --tessel-only.\n";

struct BenchArgs {
  std::string suite;
  std::string shapes = "8192x8192x8192,8192x8192x4096,4096x4096x4096,1000x1000x1000,8191x4097x520";
  std::string dtype = "all";
  std::string json;
  int iterations = 50;
  int warmup = 10;
};

BenchArgs parse_args(const std::vector<std::string>& args) {
  BenchArgs parsed;
  std::vector<std::string> positional = OptionParser("bench")
                                            .value("--shapes", parsed.shapes)
                                            .value("--dtype", parsed.dtype)
                                            .value("--json", parsed.json)
                                            .integer("--iterations", parsed.iterations, 1)
                                            .integer("--warmup", parsed.warmup, 1)
                                            .parse(args);
  if (positional.empty()) user_error(SourceLocation::unknown(), "which suite?\n", kUsage);
  parsed.suite = positional[0];
  if (positional.size() > 1) {
    user_error(SourceLocation::unknown(), "unexpected argument '", positional[1], "'");
  }
  if (parsed.suite != "gemm-reference") {
    user_error(SourceLocation::unknown(), "unknown suite '", parsed.suite,
               "' (known: attention, gemm, gemm-reference, memory-bound, summary)");
  }
  if (parsed.dtype != "f16" && parsed.dtype != "bf16" && parsed.dtype != "all") {
    user_error(SourceLocation::unknown(), "--dtype must be f16, bf16 or all, not '", parsed.dtype,
               "'");
  }
  return parsed;
}

// The values after the option at args[i], up to the next option (`--...`); `i` moves to the last
// of them. A user error naming `what` when there are none.
std::vector<std::string> option_values(const std::vector<std::string>& args, size_t& i,
                                       const std::string& what) {
  std::vector<std::string> values;
  const std::string& option = args[i];
  for (; i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0; ++i)
    values.push_back(args[i + 1]);
  if (values.empty())
    user_error(SourceLocation::unknown(), "bench attention: ", option, " needs at least one ",
               what);
  return values;
}

// `tessel bench attention`: the baselines live in PyTorch (cuDNN and FlashAttention-2 through
// SDPA), so the suite is the Python benchmark; this checks the options and runs it.
int run_attention_bench(const std::vector<std::string>& args) {
  std::vector<std::string> forwarded, shapes;
  bool causal = false, kernel = false, variants = false, tuned = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--causal") {
      causal = true;
      forwarded.push_back(a);
    } else if (a == "--varlen") {
      if (i + 2 >= args.size())
        user_error(SourceLocation::unknown(), "bench attention: --varlen needs L1,L2,... and H");
      const std::string& lengths = args[i + 1];
      const std::string& heads = args[i + 2];
      if (lengths.empty() || lengths.find_first_not_of("0123456789,") != std::string::npos ||
          heads.empty() || heads.find_first_not_of("0123456789") != std::string::npos)
        user_error(SourceLocation::unknown(), "bench attention: --varlen takes lengths L1,L2,... ",
                   "and a head count H, not '", lengths, " ", heads, "'");
      forwarded.insert(forwarded.end(), {a, lengths, heads});
      i += 2;
    } else if (a == "--triton") {
      forwarded.push_back(a);
    } else if (a == "--tuned") {
      tuned = true;
      forwarded.push_back(a);
    } else if (a == "--variants") {
      forwarded.push_back(a);
      for (const std::string& file : option_values(args, i, "FILE.tir")) {
        if (!std::ifstream(file))
          user_error(SourceLocation::unknown(), "bench attention: variant '", file,
                     "' does not exist");
        forwarded.push_back(file);
      }
      variants = true;
    } else if (a == "--shapes") {
      forwarded.push_back(a);
      for (const std::string& shape : option_values(args, i, "B,H,L,D")) {
        int commas = static_cast<int>(std::count(shape.begin(), shape.end(), ','));
        if (shape.find_first_not_of("0123456789,") != std::string::npos ||
            (commas != 3 && commas != 4))
          user_error(SourceLocation::unknown(), "bench attention: shape '", shape,
                     "' is not B,H,L,D or B,H,L,D,HKV");
        forwarded.push_back(shape);
        shapes.push_back(shape);
      }
    } else if (a == "--dtype" || a == "--kernel" || a == "--json" || a == "--iterations") {
      if (i + 1 >= args.size())
        user_error(SourceLocation::unknown(), "bench attention: ", a, " needs a value");
      if (a == "--dtype" && args[i + 1] != "f16" && args[i + 1] != "bf16")
        user_error(SourceLocation::unknown(), "bench attention: --dtype must be f16 or bf16, not '",
                   args[i + 1], "'");
      kernel = kernel || a == "--kernel";
      forwarded.push_back(a);
      forwarded.push_back(args[++i]);
    } else {
      user_error(SourceLocation::unknown(), "bench attention: unknown option '", a,
                 "' (see `tessel help bench`)");
    }
  }
  if (tuned && !variants)
    user_error(SourceLocation::unknown(),
               "bench attention: --tuned needs --variants (the kernels to tune among)");
  // Without --kernel each shape runs the example its head dim, --causal and HKV name (the rule of
  // bench/python/attention.py); a shape no example serves is refused here, before torch starts.
  for (const std::string& shape : shapes) {
    if (kernel) break;
    std::vector<std::string> parts;
    for (size_t at = 0, next; at <= shape.size(); at = next + 1) {
      next = shape.find(',', at);
      if (next == std::string::npos) next = shape.size();
      parts.push_back(shape.substr(at, next - at));
    }
    const bool gqa = parts.size() == 5;
    const std::string name = std::string("flash_attention") + (causal ? "_causal" : "") +
                             (gqa ? "_gqa" : "") + (parts[3] == "128" ? "" : "_d" + parts[3]);
    const std::string file = std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/" + name + ".tir";
    if (!std::ifstream(file))
      user_error(SourceLocation::unknown(), "bench attention: no example kernel serves shape '",
                 shape, "' (", causal ? "causal, " : "", gqa ? "grouped-query, " : "", "head dim ",
                 parts[3], ": examples/kernels/", name,
                 ".tir does not exist); pass --kernel FILE.tir");
  }
  return run_python_script("attention.py", forwarded);
}

int run_bench(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "attention")
    return run_attention_bench(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "w4a16")
    return run_w4a16_bench(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "moe")
    return run_moe_bench(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "memory-bound") {  // bench/harness/memory_bench.h
    return bench::run_memory_bench(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && args[0] == "gemm") {  // bench/harness/compiled_gemm_bench.h
    return bench::run_gemm_bench(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && args[0] == "summary") {  // bench/harness/summary.h
    return bench::run_summary(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  BenchArgs parsed = parse_args(args);
  std::vector<bench::GemmShape> shapes = bench::parse_gemm_shapes(parsed.shapes);
  std::string reason;
  if (!runtime::gpu_available(&reason)) {
    user_error(SourceLocation::unknown(), "tessel bench needs a GPU: ", reason);
  }
  std::ostringstream command;
  command << "tessel bench";
  for (const std::string& arg : args) command << " " << arg;
  bench::Provenance provenance = bench::collect_provenance(command.str());
  std::cout << "device: " << provenance.device << "   commit: " << provenance.commit << "\n";

  std::vector<bench::GemmElement> elements;
  if (parsed.dtype != "bf16") elements.push_back(bench::GemmElement::f16);
  if (parsed.dtype != "f16") elements.push_back(bench::GemmElement::bf16);
  bench::CublasBaseline cublas;
  std::vector<bench::BenchRecord> records;
  for (bench::GemmElement element : elements) {
    reference::ReferenceGemm gemm(element == bench::GemmElement::f16 ? reference::GemmType::f16
                                                                     : reference::GemmType::bf16);
    const runtime::CompileResult& compiled = gemm.compile_result();
    std::cout << "compiled gemm-reference " << bench::to_string(element) << " in "
              << compiled.milliseconds << " ms (" << (compiled.cache_hit ? "cache hit" : "NVRTC")
              << ")\n";
    bench::GemmBenchOptions options;
    options.name = "gemm-reference";
    options.element = element;
    options.iterations = parsed.iterations;
    options.warmup = parsed.warmup;
    for (const bench::GemmShape& shape : shapes) {
      records.push_back(bench::bench_gemm(
          options, shape,
          [&](CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n, int k, CUstream stream) {
            gemm.run(a, b, c, m, n, k, stream);
          },
          cublas));
    }
  }
  bench::print_table(records);
  if (!parsed.json.empty()) bench::write_json(parsed.json, records, provenance);
  for (const bench::BenchRecord& record : records) {
    if (!record.passed) return 1;
  }
  return 0;
}

const bool registered = register_command(
    {"bench", "benchmark tessel kernels against cuBLAS and other libraries", kUsage, &run_bench});

}  // namespace
}  // namespace tessel::tool
