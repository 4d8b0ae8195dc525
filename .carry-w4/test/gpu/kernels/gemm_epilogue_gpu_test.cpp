// The GEMMs with epilogues that tessel compiles for sm_90a, on the GPU: gemm_bias_relu
// (C = relu(A B^T + bias)) and dual_gemm (D = silu(A B0^T) * (A B1^T)) from examples/kernels, fresh
// random inputs for every case, the output poisoned with NaN before the launch, shapes that are
// not tile multiples in M, N and K, compared with a float64 host reference by ||out - ref|| /
// ||ref||. Every output element is checked to be written (no NaN left); the float64 reference
// covers every row of the first and last row tiles and a stride through the rest. The epilogues
// alone (products read from global memory, test/unit/codegen/gemm_epilogue_kernels.h) are checked
// on every element, so an epilogue bug shows apart from a mainloop bug.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "compile/compile.h"
#include "gpu/gpu_test.h"
#include "ir/parser.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/numerics.h"
#include "tessel/example_kernels.h"
#include "unit/codegen/gemm_epilogue_kernels.h"

namespace tessel {
namespace {

class GemmEpilogueGpuTest : public testing::GpuTest {};

using runtime::HostFloat;

struct Shape {
  int64_t m, n, k;
};

CompiledKernel compile_text(const std::string& text, const std::string& name) {
  auto module = ir::parse_module(text, name + ".tir");
  return compile(*module->kernels.front(), target::cuda::Target::sm90a());
}

// Rows the float64 reference covers: the first and last 128 (the first and the ragged last row
// tile) and every 61st in between.
std::vector<int64_t> checked_rows(int64_t m) {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < m; ++r) {
    if (r < 128 || r >= m - 128 || r % 61 == 0) rows.push_back(r);
  }
  return rows;
}

// One input tensor: its format, shape and the range of its random values.
struct Input {
  HostFloat format;
  std::vector<int64_t> shape;
  float low = -1.0f, high = 1.0f;
};
using Inputs = std::vector<std::vector<float>>;
// The float64 reference of output element (i, j) from the inputs' values.
using Reference = std::function<double(const Inputs&, int64_t i, int64_t j)>;

// Fresh random inputs, a NaN-poisoned f16 [M,N] output (the last parameter), one launch; checks
// that every output element was written and returns ||out - ref|| / ||ref|| over `rows`.
double run_case(CompiledKernel& kernel, const std::string& label, const std::vector<Input>& inputs,
                int64_t m, int64_t n, const std::vector<int64_t>& rows, const Reference& ref) {
  const uint64_t seed = runtime::fresh_seed();
  SCOPED_TRACE(label + " seed " + std::to_string(seed));
  Inputs values;
  std::vector<runtime::DeviceBuffer> buffers;
  std::vector<KernelArg> args;
  for (size_t t = 0; t < inputs.size(); ++t) {
    const Input& in = inputs[t];
    int64_t count = 1;
    for (int64_t e : in.shape) count *= e;
    auto bits = runtime::random_values(in.format, count, seed + t, in.low, in.high);
    values.push_back(runtime::to_floats(in.format, bits));
    buffers.push_back(runtime::DeviceBuffer::from_host(bits));
    args.emplace_back(
        TensorArg{buffers.back().ptr(), in.shape,
                  in.format == HostFloat::f16 ? ir::ScalarKind::f16 : ir::ScalarKind::f32});
  }
  runtime::DeviceBuffer out(std::max<int64_t>(m * n, 1) * 2);
  out.fill_bytes(0xFF);  // NaN in f16: an element the kernel misses fails the check
  args.emplace_back(TensorArg{out.ptr(), {m, n}, ir::ScalarKind::f16});
  kernel.launch(args);
  runtime::context().synchronize();
  std::vector<float> c = runtime::to_floats(HostFloat::f16, out.to_host<uint8_t>());
  int64_t unwritten = 0;
  for (float x : c) unwritten += std::isnan(x);
  EXPECT_EQ(unwritten, 0) << "output elements left NaN (unwritten, or NaN computed)";
  std::vector<float> got;
  std::vector<double> want;
  for (int64_t i : rows) {
    for (int64_t j = 0; j < n; ++j) {
      got.push_back(c[i * n + j]);
      want.push_back(ref(values, i, j));
    }
  }
  return runtime::relative_error(got, want);
}

std::string shape_label(const std::string& name, Shape s) {
  return name + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

double dot(const std::vector<float>& a, const std::vector<float>& b, int64_t i, int64_t j,
           int64_t k) {
  double sum = 0;
  for (int64_t x = 0; x < k; ++x) sum += double(a[i * k + x]) * double(b[j * k + x]);
  return sum;
}

double silu(double g) {
  return g / (1.0 + std::exp(-g));
}

// Ragged in M, N and K against both tilings (128x256x64, 128x128x64), one partial tile, an odd N,
// and large ones.
const std::vector<Shape> kShapes = {{1, 1, 8},        {128, 256, 64},    {257, 129, 72},
                                    {1000, 520, 264}, {8191, 4097, 520}, {2048, 2048, 2048},
                                    {300, 600, 4104}};

TEST_F(GemmEpilogueGpuTest, BiasRelu) {
  CompiledKernel kernel =
      compile_text(examples::lowered_kernels().at("gemm_bias_relu"), "gemm_bias_relu");
  for (Shape s : kShapes) {
    int64_t k = s.k;
    double err = run_case(
        kernel, shape_label("gemm_bias_relu", s),
        {{HostFloat::f16, {s.m, s.k}}, {HostFloat::f16, {s.n, s.k}}, {HostFloat::f16, {s.n}}}, s.m,
        s.n, checked_rows(s.m), [k](const Inputs& in, int64_t i, int64_t j) {
          return std::max(dot(in[0], in[1], i, j, k) + double(in[2][j]), 0.0);
        });
    EXPECT_LT(err, 2e-3) << shape_label("gemm_bias_relu", s);
  }
}

TEST_F(GemmEpilogueGpuTest, DualGemmSiluGate) {
  CompiledKernel kernel = compile_text(examples::lowered_kernels().at("dual_gemm"), "dual_gemm");
  for (Shape s : kShapes) {
    int64_t k = s.k;
    double err = run_case(
        kernel, shape_label("dual_gemm", s),
        {{HostFloat::f16, {s.m, s.k}}, {HostFloat::f16, {s.n, s.k}}, {HostFloat::f16, {s.n, s.k}}},
        s.m, s.n, checked_rows(s.m), [k](const Inputs& in, int64_t i, int64_t j) {
          return silu(dot(in[0], in[1], i, j, k)) * dot(in[0], in[2], i, j, k);
        });
    EXPECT_LT(err, 2e-3) << shape_label("dual_gemm", s);
  }
}

// The epilogues alone (products from global memory), every element checked.
const std::vector<std::pair<int64_t, int64_t>> kEpilogueShapes = {
    {1, 1}, {128, 256}, {129, 257}, {1000, 520}, {333, 4097}};

std::vector<int64_t> all_rows(int64_t m) {
  std::vector<int64_t> rows(m);
  for (int64_t r = 0; r < m; ++r) rows[r] = r;
  return rows;
}

TEST_F(GemmEpilogueGpuTest, BiasReluEpilogueAlone) {
  CompiledKernel kernel = compile_text(testing::kBiasReluEpilogueTir, "bias_relu_epilogue");
  for (auto [m, n] : kEpilogueShapes) {
    std::string label = "bias_relu_epilogue " + std::to_string(m) + "x" + std::to_string(n);
    double err =
        run_case(kernel, label, {{HostFloat::f32, {m, n}, -4.0f, 4.0f}, {HostFloat::f16, {n}}}, m,
                 n, all_rows(m), [n](const Inputs& in, int64_t i, int64_t j) {
                   return std::max(double(in[0][i * n + j]) + double(in[1][j]), 0.0);
                 });
    EXPECT_LT(err, 1e-3) << label;
  }
}

TEST_F(GemmEpilogueGpuTest, SiluGateEpilogueAlone) {
  CompiledKernel kernel = compile_text(testing::kSiluGateEpilogueTir, "silu_gate_epilogue");
  for (auto [m, n] : kEpilogueShapes) {
    std::string label = "silu_gate_epilogue " + std::to_string(m) + "x" + std::to_string(n);
    double err =
        run_case(kernel, label,
                 {{HostFloat::f32, {m, n}, -6.0f, 6.0f}, {HostFloat::f32, {m, n}, -2.0f, 2.0f}}, m,
                 n, all_rows(m), [n](const Inputs& in, int64_t i, int64_t j) {
                   return silu(in[0][i * n + j]) * double(in[1][i * n + j]);
                 });
    EXPECT_LT(err, 1e-3) << label;
  }
}

}  // namespace
}  // namespace tessel
