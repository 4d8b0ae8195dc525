// The sm_80 GEMM path (cp.async ring, ldmatrix, mma.sync; examples/kernels/gemm_sm80.tir) on the
// GPU: fresh random inputs for every case, the output poisoned with NaN before the launch, shapes
// that are not tile multiples in M, N and K, compared with a float64 host reference by
// ||C - ref|| / ||ref||, in f16 and bf16, with 1 and 3 stages, 4 and 8 warps, and with the
// element-by-element copies that a kernel without the K % 8 fact gets. Large shapes check a
// sample of rows (every row of the first and last tiles and a stride through the rest).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "compile/compile.h"
#include "gpu/gpu_test.h"
#include "ir/parser.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/numerics.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

class GemmSm80GpuTest : public testing::GpuTest {};

struct Shape {
  int64_t m, n, k;
};

struct Variant {
  runtime::HostFloat format = runtime::HostFloat::f16;
  int stages = 3;
  int threads = 256;
  bool aligned = true;  // keep facts(K % 8 == 0): 16-byte cp.async; else ld.global + st.shared
  bool b_kn = false;    // B given as [K,N] ("NN", read with ldmatrix.trans), not [N,K]
  int k_divisor = 8;    // the fact K % k_divisor == 0 (4: 8-byte cp.async)
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string variant_text(const Variant& v) {
  std::string text = examples::lowered_kernels().at("gemm_sm80");
  bool bf16 = v.format == runtime::HostFloat::bf16;
  if (bf16) replace_all(text, "<f16>", "<bf16>");
  replace_all(text, "stages = 3", "stages = " + std::to_string(v.stages));
  replace_all(text, "threads = 256", "threads = " + std::to_string(v.threads));
  if (!v.aligned) replace_all(text, " facts(K % 8 == 0)", "");
  replace_all(text, "K % 8 == 0", "K % " + std::to_string(v.k_divisor) + " == 0");
  if (v.b_kn) {
    std::string t = bf16 ? "<bf16>" : "<f16>";
    replace_all(text, "facts(K % 8 == 0)", "facts(K % 8 == 0, N % 8 == 0)");
    replace_all(text, "%B: global" + t + "[N,K]", "%B: global" + t + "[K,N]");
    replace_all(text,
                "    %B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [128,32]} : global" +
                    t + "[128,32]\n    %sB = copy %B_tile : shared" + t +
                    "[128,32]\n    %sBt = transpose %sB : shared" + t + "[32,128]\n",
                "    %B_tile = tile %B, %k, %bn {masked, pad = 0.0, shape = [32,128]} : global" +
                    t + "[32,128]\n    %sBt = copy %B_tile : shared" + t + "[32,128]\n");
  }
  return text;
}

// C = A B^T with A [M,K], B [N,K] row-major (or C = A B with B [K,N]); returns the relative error
// over the checked rows.
double run_gemm(const Variant& v, Shape s) {
  auto module = ir::parse_module(variant_text(v), "gemm_sm80.tir");
  // The sm_80 instruction path, compiled for the device at hand (an sm_80 cubin does not load
  // on an H100).
  CompileOptions options;
  options.nvrtc_arch = native_arch();
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm80(), options);
  const uint64_t seed = runtime::fresh_seed();
  std::string what = std::string(v.format == runtime::HostFloat::f16 ? "f16" : "bf16") + " " +
                     std::to_string(v.stages) + " stages " + std::to_string(v.threads) +
                     " threads" + (v.aligned ? "" : " unaligned") + (v.b_kn ? " B[K,N]" : "") +
                     " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                     std::to_string(s.k) + " seed " + std::to_string(seed);
  std::fprintf(stderr, "  %s\n", what.c_str());
  SCOPED_TRACE(what);
  auto a_bits = runtime::random_values(v.format, s.m * s.k, seed);
  auto b_bits = runtime::random_values(v.format, s.n * s.k, seed + 1);
  auto a = runtime::to_floats(v.format, a_bits), b = runtime::to_floats(v.format, b_bits);
  runtime::DeviceBuffer da = runtime::DeviceBuffer::from_host(a_bits);
  runtime::DeviceBuffer db = runtime::DeviceBuffer::from_host(b_bits);
  runtime::DeviceBuffer dc(std::max<int64_t>(s.m * s.n, 1) * 2);
  dc.fill_bytes(0xFF);  // NaN in f16 and bf16: an element the kernel misses fails the check
  ir::ScalarKind element =
      v.format == runtime::HostFloat::f16 ? ir::ScalarKind::f16 : ir::ScalarKind::bf16;
  std::vector<int64_t> b_shape =
      v.b_kn ? std::vector<int64_t>{s.k, s.n} : std::vector<int64_t>{s.n, s.k};
  kernel.launch({TensorArg{da.ptr(), {s.m, s.k}, element}, TensorArg{db.ptr(), b_shape, element},
                 TensorArg{dc.ptr(), {s.m, s.n}, element}});
  runtime::context().synchronize();
  auto c_bits = dc.to_host<uint8_t>();
  auto c = runtime::to_floats(v.format, c_bits);
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < s.m; ++r) {
    if (r < 128 || r >= s.m - 128 || r % 61 == 0) rows.push_back(r);
  }
  std::vector<float> got;
  std::vector<double> want;
  for (int64_t r : rows) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < s.k; ++k)
        sum += double(a[r * s.k + k]) * double(v.b_kn ? b[k * s.n + j] : b[j * s.k + k]);
      want.push_back(sum);
      got.push_back(c[r * s.n + j]);
    }
  }
  return runtime::relative_error(got, want);
}

// Ragged in every dimension (K not a multiple of the 32-element step), one whole tile, tiny, and
// a large square one.
const std::vector<Shape> kShapes = {
    {1000, 520, 264}, {257, 129, 72}, {128, 128, 32}, {1, 1, 8}, {2048, 2048, 2048}};

TEST_F(GemmSm80GpuTest, F16ThreeStages) {
  for (Shape s : kShapes) EXPECT_LT(run_gemm({runtime::HostFloat::f16, 3, 256, true}, s), 2e-3);
}
TEST_F(GemmSm80GpuTest, F16OneStage) {
  for (Shape s : kShapes) EXPECT_LT(run_gemm({runtime::HostFloat::f16, 1, 256, true}, s), 2e-3);
}
TEST_F(GemmSm80GpuTest, Bf16ThreeStages) {
  for (Shape s : kShapes) EXPECT_LT(run_gemm({runtime::HostFloat::bf16, 3, 256, true}, s), 1e-2);
}
TEST_F(GemmSm80GpuTest, Bf16OneStage) {
  for (Shape s : kShapes) EXPECT_LT(run_gemm({runtime::HostFloat::bf16, 1, 256, true}, s), 1e-2);
}
// Four warps (each 64x64 of C) and two stages.
TEST_F(GemmSm80GpuTest, FourWarpsTwoStages) {
  for (Shape s : {Shape{1000, 520, 264}, Shape{257, 129, 72}})
    EXPECT_LT(run_gemm({runtime::HostFloat::f16, 2, 128, true}, s), 2e-3);
}
// No K % 8 fact: rows may be misaligned, so the copies are predicated single elements (any K).
TEST_F(GemmSm80GpuTest, UnalignedRowsCopyElementByElement) {
  for (Shape s : {Shape{257, 129, 75}, Shape{1000, 520, 263}, Shape{64, 64, 1}}) {
    EXPECT_LT(run_gemm({runtime::HostFloat::f16, 3, 256, false}, s), 2e-3);
    EXPECT_LT(run_gemm({runtime::HostFloat::bf16, 1, 256, false}, s), 1e-2);
  }
}

// K % 4 == 0 only: rows are 8-byte aligned, so the copies are 8-byte cp.async (zero-filled at the
// edges).
TEST_F(GemmSm80GpuTest, EightByteCopiesWhenKIsAMultipleOfFour) {
  for (Shape s : {Shape{1000, 520, 260}, Shape{257, 129, 76}}) {
    Variant v;
    v.k_divisor = 4;
    EXPECT_LT(run_gemm(v, s), 2e-3);
  }
}
// B as [K,N]: the operand reaches the mma through ldmatrix.trans (N % 8 == 0 for 16-byte rows).
TEST_F(GemmSm80GpuTest, BGivenAsKByN) {
  for (Shape s : {Shape{1000, 520, 264}, Shape{257, 136, 72}, Shape{2048, 2048, 2048}}) {
    EXPECT_LT(run_gemm({runtime::HostFloat::f16, 3, 256, true, true}, s), 2e-3);
    EXPECT_LT(run_gemm({runtime::HostFloat::bf16, 2, 256, true, true}, s), 1e-2);
  }
}

}  // namespace
}  // namespace tessel
