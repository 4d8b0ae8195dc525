// `tessel example [NAME]`: the kernels written in the C++ tile language (examples/tile/kernels.h),
// printed as tile IR text, so that each can be run (`tessel example gemm | tessel run - --interpret
// --size M=100,N=72,K=40`), compiled or optimized like a .tir file. Without a name: the list.
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"
#include "tile/kernels.h"

namespace tessel::tool {
namespace {

struct Example {
  std::string what;
  std::function<TileKernel(ScalarKind)> make;  // from the input element type
};

// Every example, with the tile sizes its unit test uses (test/unit/frontend/examples_test.cpp).
const std::map<std::string, Example>& examples_by_name() {
  using namespace tessel::examples;
  static const std::map<std::string, Example> table = {
      {"gemm", {"C = A B^T, A [M,K], B [N,K], f32 accumulation",
                [](ScalarKind t) { return gemm(t, t, {32, 32, 16}); }}},
      {"batched_gemm", {"C[b] = A[b] B[b]^T over a batch",
                        [](ScalarKind t) { return batched_gemm(t, {16, 16, 16}); }}},
      {"dual_gemm", {"C = A B1^T + A B2^T (two accumulators sharing A)",
                     [](ScalarKind t) { return dual_gemm(t, {16, 16, 16}); }}},
      {"gemm_rowsum", {"C = A B^T and R[m] = sum_k A[m,k] (Cypress)",
                       [](ScalarKind t) { return gemm_rowsum(t, {16, 16, 16}); }}},
      {"gemm_bias_relu", {"C = relu(A B^T + bias[N])",
                          [](ScalarKind t) { return gemm_bias_relu(t, {32, 32, 16}); }}},
      {"gemm_int4", {"C = A dequant(W)^T, W int4 with f16 group scales (Hexcute; input type fixed)",
                     [](ScalarKind) { return gemm_int4(16, {16, 16, 16}); }}},
      {"gemv", {"y = A x", [](ScalarKind t) { return gemv(t, 8, 32); }}},
      {"softmax", {"Y = softmax(X) along rows", [](ScalarKind t) { return softmax(t, 8, 32); }}},
      {"rmsnorm", {"Y = X rsqrt(mean(X^2) + eps) w along rows",
                   [](ScalarKind t) { return rmsnorm(t, 8, 32); }}},
      {"layernorm", {"Y = (X - mean) rsqrt(var + eps) w + b along rows",
                     [](ScalarKind t) { return layernorm(t, 8, 32); }}},
      {"flash_attention", {"O = softmax(Q K^T scale) V per head, online softmax (input type fixed)",
                           [](ScalarKind) { return flash_attention(false, 16, 16, 32); }}},
      {"flash_attention_causal",
       {"the same, causal", [](ScalarKind) { return flash_attention(true, 16, 16, 32); }}},
  };
  return table;
}

int run_example(const std::vector<std::string>& args) {
  std::string dtype = "f16";
  std::vector<std::string> names = OptionParser("example").value("--dtype", dtype).parse(args);
  const auto& table = examples_by_name();
  if (names.empty()) {
    for (const auto& [name, example] : table) std::cout << name << ": " << example.what << "\n";
    return 0;
  }
  if (names.size() > 1) {
    user_error(SourceLocation::unknown(), "example takes one name, got '", names[0], "' and '",
               names[1], "'");
  }
  auto it = table.find(names[0]);
  if (it == table.end()) {
    std::string known;
    for (const auto& [name, unused] : table) known += (known.empty() ? "" : ", ") + name;
    user_error(SourceLocation::unknown(), "no example '", names[0], "' (the examples: ", known,
               ")");
  }
  ScalarKind element;
  if (dtype == "f16") {
    element = ScalarKind::f16;
  } else if (dtype == "bf16") {
    element = ScalarKind::bf16;
  } else {
    user_error(SourceLocation::unknown(), "--dtype must be f16 or bf16, not '", dtype, "'");
  }
  std::cout << it->second.make(element).text();
  return 0;
}

const bool registered = register_command(
    {"example", "print a kernel of the C++ tile language (examples/tile/) as tile IR",
     "usage: tessel example [NAME] [--dtype f16|bf16]\n\n"
     "Without NAME, lists the kernels written in the C++ tile language (examples/tile/kernels.h).\n"
     "With one, prints it as tile IR text (inputs of --dtype, default f16), to run, compile or\n"
     "optimize like a .tir file:\n"
     "  tessel example gemm | tessel run - --interpret --size M=100,N=72,K=40\n",
     &run_example});

}  // namespace
}  // namespace tessel::tool
