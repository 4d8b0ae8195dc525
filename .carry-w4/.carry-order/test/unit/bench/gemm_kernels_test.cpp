// The GEMM bench's reading of a kernel (roles, epilogue) and its host replay of the epilogue,
// without a GPU.
#include "bench/harness/gemm_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "interp/interpreter.h"
#include "interp/numerics.h"
#include "ir/parser.h"
#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

// A GEMM with 128x256x64 tiles whose epilogue is `epilogue` (ops after the loop ending in %out,
// register<OUT>[128,256]), its extra parameters `params` after %B.
std::string gemm_text(const std::string& params, const std::string& epilogue,
                      const std::string& out = "f16") {
  return R"(kernel @g[M, N, K](%A: global<f16>[M,K], %B: global<f16>[N,K])" + params +
         R"(, %C: global<)" + out + R"(>[M,N]) facts(K % 8 == 0) {
  %M = size {name = M} : index
  %N = size {name = N} : index
  %K = size {name = K} : index
  %c128 = const {value = 128} : index
  %c256 = const {value = 256} : index
  %c64 = const {value = 64} : index
  %c0 = const {value = 0} : index
  %c1 = const {value = 1} : index
  %tiles_m = cdiv %M, %c128 : index
  %tiles_n = cdiv %N, %c256 : index
  %bm, %bn = block_grid %tiles_m, %tiles_n : index, index
  %zero = fill {value = 0.0} : register<f32>[128,256]
  %tiles_k = cdiv %K, %c64 : index
  %acc = for %k = %c0 to %tiles_k step %c1 iter(%c = %zero) : register<f32>[128,256] {
    %A_tile = tile %A, %bm, %k {masked, pad = 0.0, shape = [128,64]} : global<f16>[128,64]
    %sA = copy %A_tile : shared<f16>[128,64]
    %B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [256,64]} : global<f16>[256,64]
    %sB = copy %B_tile : shared<f16>[256,64]
    %sBt = transpose %sB : shared<f16>[64,256]
    %c_next = mma %sA, %sBt, %c : register<f32>[128,256]
    yield %c_next
  }
)" + epilogue +
         R"(
  %C_tile = tile %C, %bm, %bn {masked, pad = 0.0, shape = [128,256]} : global<)" +
         out + R"(>[128,256]
  copy %out, %C_tile
}
)";
}

constexpr const char* kBiasRelu = R"(
  %bias_tile = tile %bias, %bn {masked, pad = 0.0, shape = [256]} : global<f16>[256]
  %rbias = copy %bias_tile : register<f16>[256]
  %fbias = cast %rbias : register<f32>[256]
  %bias_rows = broadcast %fbias {dims = [0]} : register<f32>[128,256]
  %h = add %acc, %bias_rows : register<f32>[128,256]
  %f0 = const {value = 0.0} : f32
  %y = max %h, %f0 : register<f32>[128,256]
  %out = cast %y : register<f16>[128,256])";

constexpr const char* kDual =
    R"(kernel @dual[M, N, K](%A: global<f16>[M,K], %B0: global<f16>[N,K], %B1: global<f16>[N,K], %D: global<f16>[M,N]) facts(K % 8 == 0) {
  %M = size {name = M} : index
  %N = size {name = N} : index
  %K = size {name = K} : index
  %c128 = const {value = 128} : index
  %c64 = const {value = 64} : index
  %c0 = const {value = 0} : index
  %c1 = const {value = 1} : index
  %tiles_m = cdiv %M, %c128 : index
  %tiles_n = cdiv %N, %c128 : index
  %bm, %bn = block_grid %tiles_m, %tiles_n : index, index
  %zero = fill {value = 0.0} : register<f32>[128,128]
  %tiles_k = cdiv %K, %c64 : index
  %gate, %up = for %k = %c0 to %tiles_k step %c1 iter(%g = %zero, %u = %zero) : register<f32>[128,128], register<f32>[128,128] {
    %A_tile = tile %A, %bm, %k {masked, pad = 0.0, shape = [128,64]} : global<f16>[128,64]
    %sA = copy %A_tile : shared<f16>[128,64]
    %B0_tile = tile %B0, %bn, %k {masked, pad = 0.0, shape = [128,64]} : global<f16>[128,64]
    %sB0 = copy %B0_tile : shared<f16>[128,64]
    %sB0t = transpose %sB0 : shared<f16>[64,128]
    %B1_tile = tile %B1, %bn, %k {masked, pad = 0.0, shape = [128,64]} : global<f16>[128,64]
    %sB1 = copy %B1_tile : shared<f16>[128,64]
    %sB1t = transpose %sB1 : shared<f16>[64,128]
    %g_next = mma %sA, %sB0t, %g : register<f32>[128,128]
    %u_next = mma %sA, %sB1t, %u : register<f32>[128,128]
    yield %g_next, %u_next
  }
  %sig = sigmoid %gate : register<f32>[128,128]
  %silu = mul %gate, %sig : register<f32>[128,128]
  %prod = mul %silu, %up : register<f32>[128,128]
  %out = cast %prod : register<f16>[128,128]
  %D_tile = tile %D, %bm, %bn {masked, pad = 0.0, shape = [128,128]} : global<f16>[128,128]
  copy %out, %D_tile
}
)";

double f16(double v) {
  return interp::round_to(ir::ScalarKind::f16, v);
}

std::string analysis_error(const std::string& text) {
  auto module = ir::parse_module(text, "k.tir");
  try {
    GemmKernelInfo info(*module->kernels.front());
    return "no error; roles: " + info.describe();
  } catch (const UserError& e) {
    return e.what();
  }
}

// gemm_text's GEMM with B stored [K,N] and read without a transpose (C = A·B).
std::string nn_gemm_text() {
  std::string kn = gemm_text("", "  %out = cast %acc : register<f16>[128,256]");
  kn.replace(kn.find("%B: global<f16>[N,K]"), 20, "%B: global<f16>[K,N]");
  kn.replace(kn.find("%B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [256,64]} : "
                     "global<f16>[256,64]"),
             std::string("%B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [256,64]} : "
                         "global<f16>[256,64]")
                 .size(),
             "%B_tile = tile %B, %k, %bn {masked, pad = 0.0, shape = [64,256]} : "
             "global<f16>[64,256]");
  kn.replace(kn.find("%sB = copy %B_tile : shared<f16>[256,64]"), 40,
             "%sBt = copy %B_tile : shared<f16>[64,256]");
  kn.erase(kn.find("    %sBt = transpose %sB : shared<f16>[64,256]\n"), 47);
  return kn;
}

TEST(GemmKernels, PlainGemmRolesAndRounding) {
  auto module =
      ir::parse_module(gemm_text("", "  %out = cast %acc : register<f16>[128,256]"), "gemm.tir");
  GemmKernelInfo info(*module->kernels.front());
  const GemmRoles& roles = info.roles();
  EXPECT_EQ(roles.a, 0);
  EXPECT_EQ(roles.b, std::vector<int>{1});
  EXPECT_EQ(roles.outputs, std::vector<int>{2});
  EXPECT_TRUE(roles.inputs.empty());
  EXPECT_EQ(roles.m + roles.n + roles.k, "MNK");
  EXPECT_EQ(roles.element, ir::ScalarKind::f16);
  EXPECT_EQ(info.describe(), "A=%A B=%B; %C = f16((A·%B^T))");
  double p = 0.1;  // not an f16: the replayed cast must round it
  EXPECT_EQ(info.evaluate(0, &p, 3, 5, {}), f16(0.1));
  EXPECT_NE(f16(0.1), 0.1);
}

TEST(GemmKernels, BiasReluReadsTheBiasByColumn) {
  auto module =
      ir::parse_module(gemm_text(", %bias: global<f16>[N]", kBiasRelu), "gemm_bias_relu.tir");
  GemmKernelInfo info(*module->kernels.front());
  EXPECT_EQ(info.roles().inputs, std::vector<int>{2});
  EXPECT_EQ(info.roles().outputs, std::vector<int>{3});
  std::map<int, std::vector<double>> tensors = {{2, {0.25, -1.0, 0.125}}};
  EpilogueInputs inputs{&tensors, 3};
  double p = -0.5;
  EXPECT_EQ(info.evaluate(0, &p, 7, 0, inputs), 0.0);  // relu(-0.25)
  p = 0.5;
  EXPECT_EQ(info.evaluate(0, &p, 7, 0, inputs), 0.75);
  EXPECT_EQ(info.evaluate(0, &p, 0, 1, inputs), 0.0);  // column 1: relu(0.5 - 1)
  p = 0.1;
  EXPECT_EQ(info.evaluate(0, &p, 1, 2, inputs), f16(static_cast<float>(0.1) + 0.125f));
  EXPECT_NE(info.describe().find("max(add((A·%B^T), f32(%bias[j])), 0)"), std::string::npos)
      << info.describe();
  EXPECT_EQ(info.bias_relu_input(), 2);  // cuBLASLt's RELU_BIAS epilogue is its baseline
}

TEST(GemmKernels, OnlyBiasReluIsMatchedToTheFusedBaseline) {
  auto bias_relu_input = [](const std::string& text) {
    auto module = ir::parse_module(text, "k.tir");
    return GemmKernelInfo(*module->kernels.front()).bias_relu_input();
  };
  EXPECT_EQ(bias_relu_input(gemm_text("", "  %out = cast %acc : register<f16>[128,256]")), -1);
  EXPECT_EQ(bias_relu_input(kDual), -1);
  std::string leaky = kBiasRelu;
  leaky.replace(leaky.find("{value = 0.0} : f32"), 19, "{value = 0.5} : f32");
  EXPECT_EQ(bias_relu_input(gemm_text(", %bias: global<f16>[N]", leaky)), -1);
  std::string no_relu = kBiasRelu;
  no_relu.replace(no_relu.find("%y = max %h, %f0"), 16, "%y = min %h, %f0");
  EXPECT_EQ(bias_relu_input(gemm_text(", %bias: global<f16>[N]", no_relu)), -1);
}

TEST(GemmKernels, ResidualReadsTheMatrixByRowAndColumn) {
  auto module = ir::parse_module(gemm_text(", %R: global<f16>[M,N]", R"(
  %R_tile = tile %R, %bm, %bn {masked, pad = 0.0, shape = [128,256]} : global<f16>[128,256]
  %rR = copy %R_tile : register<f16>[128,256]
  %fR = cast %rR : register<f32>[128,256]
  %h = add %acc, %fR : register<f32>[128,256]
  %out = cast %h : register<f16>[128,256])"),
                                 "gemm_residual.tir");
  GemmKernelInfo info(*module->kernels.front());
  EXPECT_EQ(info.roles().inputs, std::vector<int>{2});
  std::map<int, std::vector<double>> tensors = {{2, {1, 2, 3, 4, 5, 6}}};  // [2,3]
  EpilogueInputs inputs{&tensors, 3};
  double p = 0.5;
  EXPECT_EQ(info.evaluate(0, &p, 1, 2, inputs), 6.5);
  EXPECT_EQ(info.evaluate(0, &p, 0, 1, inputs), 2.5);
}

TEST(GemmKernels, DualGemmTwoProductsOneOutput) {
  auto module = ir::parse_module(kDual, "dual_gemm.tir");
  GemmKernelInfo info(*module->kernels.front());
  EXPECT_EQ(info.products(), 2);
  EXPECT_EQ(info.roles().b, (std::vector<int>{1, 2}));
  EXPECT_EQ(info.roles().outputs, std::vector<int>{3});
  double p[2] = {1.5, -2.0};
  float g = 1.5f, u = -2.0f;
  float silu = g * (1.0f / (1.0f + std::exp(-g)));
  EXPECT_NEAR(info.evaluate(0, p, 0, 0, {}), f16(silu * u), 1e-3);
  EXPECT_NEAR(info.evaluate(0, p, 0, 0, {}), -2.0 * 1.5 / (1 + std::exp(-1.5)), 3e-3);
}

TEST(GemmKernels, KernelsThatAreNotGemmsAreNamed) {
  EXPECT_NE(analysis_error(R"(kernel @copy[N](%X: global<f16>[N], %Y: global<f16>[N]) {
  %c0 = const {value = 0} : index
  %t = tile %X, %c0 {shape = [8]} : global<f16>[8]
  %r = copy %t : register<f16>[8]
  %u = tile %Y, %c0 {shape = [8]} : global<f16>[8]
  copy %r, %u
}
)")
                .find("@copy is not a GEMM the bench can run: no loop yields the result of an mma"),
            std::string::npos);
  // B read untransposed as [K,N] tiles but declared [N,K]: its extents do not match A's K.
  std::string kn = nn_gemm_text();
  std::string mismatched = kn;
  mismatched.replace(mismatched.find("%B: global<f16>[K,N]"), 20, "%B: global<f16>[N,K]");
  EXPECT_NE(analysis_error(mismatched)
                .find("A and B must be [M,K] (or [K,M]) and [N,K] (or [K,N]) tensors of one "
                      "element type"),
            std::string::npos)
      << analysis_error(mismatched);
}

// B given as [K,N] (no transpose): C = A·B, the layout the bench passes on to cuBLAS.
TEST(GemmKernels, OperandLayoutsAreReadFromTheKernel) {
  auto module = ir::parse_module(nn_gemm_text(), "gemm_nn.tir");
  GemmKernelInfo info(*module->kernels.front());
  EXPECT_TRUE(info.roles().a_k_major);
  EXPECT_FALSE(info.roles().b_k_major);
  EXPECT_EQ(info.roles().m + info.roles().n + info.roles().k, "MNK");
  EXPECT_EQ(info.describe(), "A=%A B=%B; %C = f16((A·%B))");
}

TEST(GemmKernels, EpiloguesItCannotReplayAreNamed) {
  std::string reduce = gemm_text("", R"(
  %r = reduce %acc {dims = [1], kind = sum} : register<f32>[128]
  %rb = broadcast %r {dims = [1]} : register<f32>[128,256]
  %h = add %acc, %rb : register<f32>[128,256]
  %out = cast %h : register<f16>[128,256])");
  EXPECT_NE(analysis_error(reduce).find("the epilogue of @g uses `reduce`, which the bench cannot "
                                        "replay on the host"),
            std::string::npos)
      << analysis_error(reduce);
  // A vector tiled along the rows (by %bm) but broadcast over them, as if it were per column.
  std::string wrong_axis = gemm_text(", %bias: global<f16>[M]", R"(
  %bias_tile = tile %bias, %bm {masked, pad = 0.0, shape = [128]} : global<f16>[128]
  %rbias = copy %bias_tile : register<f16>[128]
  %fbias = cast %rbias : register<f32>[128]
  %bias_rows = broadcast %fbias {dims = [0]} : register<f32>[128,256]
  %h = add %acc, %bias_rows : register<f32>[128,256]
  %out = cast %h : register<f16>[128,256])");
  EXPECT_NE(
      analysis_error(wrong_axis).find("broadcasts %fbias along the dimension it is indexed by"),
      std::string::npos)
      << analysis_error(wrong_axis);
  // A tensor parameter nothing reads: the bench would not know how to fill it.
  std::string unused =
      gemm_text(", %bias: global<f16>[N]", "  %out = cast %acc : register<f16>[128,256]");
  EXPECT_NE(analysis_error(unused).find(
                "its parameter %bias is neither an operand, an output nor read by the epilogue"),
            std::string::npos)
      << analysis_error(unused);
}

// A run of `text` in the interpreter on random inputs, as the bench would see it from the GPU:
// decoded inputs, the library's f32 products (host dot products here), decoded outputs.
struct HostRun {
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<GemmKernelInfo> info;
  std::vector<std::vector<float>> values, products, outputs;
};

HostRun run_in_interpreter(const std::string& text, const GemmShape& shape) {
  HostRun run;
  run.module = ir::parse_module(text, "k.tir");
  const ir::Operation& kernel = *run.module->kernels.front();
  run.info = std::make_unique<GemmKernelInfo>(kernel);
  const GemmRoles& roles = run.info->roles();
  std::map<std::string, int64_t> sizes = {{"M", shape.m}, {"N", shape.n}, {"K", shape.k}};
  std::vector<interp::HostTensor> tensors;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> real(-1, 1);
  for (const auto& param : kernel.region(0)->arguments()) {
    tensors.emplace_back(param->type().element(), interp::concrete_shape(param->type(), sizes));
    for (int64_t e = 0; e < tensors.back().size(); ++e) tensors.back().set_float(e, real(rng));
  }
  std::vector<interp::Argument> args;
  for (interp::HostTensor& t : tensors) args.emplace_back(&t);
  interp::RunOptions options;
  options.sizes = sizes;
  interp::interpret(kernel, args, options);
  for (const interp::HostTensor& t : tensors) {
    std::vector<float> v(t.size());
    for (int64_t e = 0; e < t.size(); ++e) v[e] = static_cast<float>(t.get_float(e));
    run.values.push_back(std::move(v));
  }
  for (int b : roles.b) {
    std::vector<float> p(static_cast<size_t>(shape.m) * shape.n);
    for (int i = 0; i < shape.m; ++i) {
      for (int j = 0; j < shape.n; ++j) {
        double sum = 0;
        for (int q = 0; q < shape.k; ++q)
          sum += double(run.values[roles.a][i * shape.k + q]) * run.values[b][j * shape.k + q];
        p[i * shape.n + j] = static_cast<float>(sum);
      }
    }
    run.products.push_back(std::move(p));
  }
  for (int o : roles.outputs) run.outputs.push_back(run.values[o]);
  return run;
}

TEST(GemmKernels, CheckAcceptsTheInterpreterAndCatchesCorruption) {
  GemmShape shape{130, 260, 72};  // partial tiles in M and N, two K steps
  HostRun run = run_in_interpreter(gemm_text(", %bias: global<f16>[N]", kBiasRelu), shape);
  GemmCheck good = check_gemm(*run.info, shape, run.values, run.products, run.outputs, 5);
  EXPECT_LT(good.rel_err, 1e-3);
  EXPECT_LT(good.rel_err_vs_library, 1e-3);
  EXPECT_LT(good.library_rel_err, 1e-3);
  // One element in a partial tile off by 20% of the output's scale: seen element by element.
  auto bad = run.outputs;
  bad[0][129 * 260 + 259] += 1.0f;
  EXPECT_GT(check_gemm(*run.info, shape, run.values, run.products, bad, 5).rel_err_vs_library,
            5 * good.rel_err_vs_library + 1e-3);
  // An element never written (poisoned NaN) fails both checks (the corner is always sampled).
  bad = run.outputs;
  bad[0][129 * 260 + 259] = NAN;
  GemmCheck poisoned = check_gemm(*run.info, shape, run.values, run.products, bad, 5);
  EXPECT_TRUE(std::isinf(poisoned.rel_err_vs_library));
  EXPECT_TRUE(std::isinf(poisoned.rel_err));
  // Without the bias the epilogue no longer matches.
  bad = run.outputs;
  for (int64_t e = 0; e < shape.m * shape.n; ++e) bad[0][e] = std::max(0.0f, run.products[0][e]);
  EXPECT_GT(check_gemm(*run.info, shape, run.values, run.products, bad, 5).rel_err_vs_library,
            0.05);
}

// C = A·Bᵀ computed as Cᵀ = B·Aᵀ (bench/kernel-variants/gemm_swap_*): the mma's first operand is
// B, and the accumulator is stored through a register transpose.
const char* kSwappedGemm = R"(kernel @s[M, N, K](%A: global<f16>[M,K], %B: global<f16>[N,K], %C: global<f16>[M,N]) facts(K % 8 == 0) {
  %M = size {name = M} : index
  %N = size {name = N} : index
  %K = size {name = K} : index
  %rows = const {value = 64} : index
  %tokens = const {value = 16} : index
  %c64 = const {value = 64} : index
  %c0 = const {value = 0} : index
  %c1 = const {value = 1} : index
  %tiles_n = cdiv %N, %rows : index
  %tiles_m = cdiv %M, %tokens : index
  %bn, %bm = block_grid %tiles_n, %tiles_m : index, index
  %zero = fill {value = 0.0} : register<f32>[64,16]
  %tiles_k = cdiv %K, %c64 : index
  %acc = for %k = %c0 to %tiles_k step %c1 iter(%c = %zero) : register<f32>[64,16] {
    %B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [64,64]} : global<f16>[64,64]
    %sW = copy %B_tile : shared<f16>[64,64]
    %A_tile = tile %A, %bm, %k {masked, pad = 0.0, shape = [16,64]} : global<f16>[16,64]
    %sA = copy %A_tile : shared<f16>[16,64]
    %sAt = transpose %sA : shared<f16>[64,16]
    %c_next = mma %sW, %sAt, %c : register<f32>[64,16]
    yield %c_next
  }
  %accT = transpose %acc : register<f32>[16,64]
  %C_tile = tile %C, %bm, %bn {masked, pad = 0.0, shape = [16,64]} : global<f16>[16,64]
  %out = cast %accT : register<f16>[16,64]
  copy %out, %C_tile
})";

TEST(GemmKernels, SwappedOperandsAreReadAsTheGemm) {
  auto module = ir::parse_module(kSwappedGemm, "swap.tir");
  GemmKernelInfo info(*module->kernels.front());
  EXPECT_TRUE(info.roles().swapped);
  EXPECT_EQ(info.roles().a, 0);
  EXPECT_EQ(info.roles().b, std::vector<int>{1});
  EXPECT_EQ(info.roles().m + info.roles().n + info.roles().k, "MNK");
  EXPECT_EQ(info.describe(), "A=%A B=%B; %C = f16((A·%B^T))");
  GemmShape shape{37, 136, 200};  // partial tiles both ways, a partial K block
  HostRun run = run_in_interpreter(kSwappedGemm, shape);
  EXPECT_LT(check_gemm(*run.info, shape, run.values, run.products, run.outputs, 5).rel_err, 1e-3);
  // A transpose in a kernel whose operands are not swapped is named, not replayed wrongly.
  const std::string twice = analysis_error(
      gemm_text("", "  %t = transpose %acc : register<f32>[256,128]\n"
                    "  %t2 = transpose %t : register<f32>[128,256]\n"
                    "  %out = cast %t2 : register<f16>[128,256]"));
  EXPECT_NE(twice.find("transposes %t; the bench replays only the transpose of a swapped "
                       "product"),
            std::string::npos)
      << twice;
}

TEST(GemmKernels, DualCheckNeedsTheProductsInOrder) {
  GemmShape shape{129, 130, 72};
  HostRun run = run_in_interpreter(kDual, shape);
  GemmCheck good = check_gemm(*run.info, shape, run.values, run.products, run.outputs, 9);
  EXPECT_LT(good.rel_err, 1e-3);
  EXPECT_LT(good.rel_err_vs_library, 1e-3);
  std::swap(run.products[0], run.products[1]);  // silu(up) * gate is another function
  EXPECT_GT(
      check_gemm(*run.info, shape, run.values, run.products, run.outputs, 9).rel_err_vs_library,
      0.05);
}

TEST(GemmKernels, TargetFromPinOrName) {
  auto module =
      ir::parse_module(gemm_text("", "  %out = cast %acc : register<f16>[128,256]"), "gemm.tir");
  EXPECT_EQ(gemm_target_name(*module->kernels.front(), "gemm"), "sm_90a");
  EXPECT_EQ(gemm_target_name(*module->kernels.front(), "gemm_sm80"), "sm_80");
}

TEST(GemmKernels, UnknownNamesListTheExamples) {
  std::string name;
  try {
    load_gemm_kernel("no_such_gemm", &name);
    FAIL() << "accepted an unknown kernel";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no example kernel 'no_such_gemm' (give a path to a .tir "
                                         "file, or one of:"),
              std::string::npos)
        << e.what();
  }
  try {
    load_gemm_kernel("/nonexistent/k.tir", &name);
    FAIL() << "accepted a missing file";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read kernel file '/nonexistent/k.tir'"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace tessel::bench
