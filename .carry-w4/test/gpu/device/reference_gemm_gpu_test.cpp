// The reference GEMM (bench/reference/): its argument checks and messages (no GPU needed), and on
// the GPU, C = A·Bᵀ against a float64 reference for square and ragged shapes in f16 and bf16, with
// and without the 2-CTA cluster, every element written.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/reference/reference_gemm.h"
#include "gpu/device/device_test_util.h"
#include "gpu/gpu_test.h"
#include "runtime/buffer.h"
#include "runtime/numerics.h"
#include "support/diagnostics.h"

namespace tessel::reference {
namespace {

using runtime::DeviceBuffer;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.message();
  }
  return "<no UserError>";
}

TEST(ReferenceGemmArguments, KNotMultipleOf8IsAUserError) {
  EXPECT_EQ(message_of([] { check_reference_gemm_arguments(0, 0, 0, 64, 64, 100); }),
            "the reference GEMM needs K % 8 == 0 (TMA reads rows of A and B with 16-byte aligned "
            "strides), got K=100");
}

TEST(ReferenceGemmArguments, NegativeExtentsAndMisalignmentAreUserErrors) {
  EXPECT_EQ(message_of([] { check_reference_gemm_arguments(0, 0, 0, -1, 8, 8); }),
            "the reference GEMM needs M, N, K >= 0, got M=-1 N=8 K=8");
  EXPECT_EQ(message_of([] { check_reference_gemm_arguments(0x1008, 0x2000, 0x3000, 8, 8, 8); }),
            "the reference GEMM needs A and B 16-byte aligned (TMA), got A=0x1008 B=0x2000");
  EXPECT_EQ(message_of([] { check_reference_gemm_arguments(0x1000, 0x2000, 0x3008, 8, 8, 8); }),
            "the reference GEMM needs C 16-byte aligned (TMA store), got C=0x3008");
  // N % 8 != 0 takes the plain-store epilogue, which needs only 2-byte alignment.
  EXPECT_EQ(message_of([] { check_reference_gemm_arguments(0x1000, 0x2000, 0x3002, 8, 9, 8); }),
            "<no UserError>");
}

TEST(ReferenceGemmArguments, BadOptionsAreUserErrors) {
  EXPECT_EQ(message_of([] {
              ReferenceGemm gemm(GemmType::f16, {3, 8, false});
            }),
            "the reference GEMM supports cluster_m 1 or 2, got 3");
  EXPECT_EQ(message_of([] {
              ReferenceGemm gemm(GemmType::f16, {2, 3, false});
            }),
            "the reference GEMM needs group_m to be a positive multiple of cluster_m (2), got 3");
  EXPECT_EQ(message_of([] {
              ReferenceGemm gemm(GemmType::f16, {1, 8, true});
            }),
            "the reference GEMM overlaps its epilogue only with cluster_m 2");
}

TEST(ReferenceGemmSource, CompilesUnderNvrtcWithoutAGpu) {
  ReferenceGemm gemm(GemmType::bf16);
  EXPECT_FALSE(gemm.compile_result().cubin.empty());
  EXPECT_EQ(gemm.kernel_name(), "reference_gemm_bf16_cluster2_overlap");
  EXPECT_NE(reference_gemm_source().find("struct TileOrder"), std::string::npos);
  EXPECT_EQ(reference_gemm_source().find("#include \"reference_gemm_config.h\""),
            std::string::npos);
}

struct Shape {
  int m, n, k;
};

class ReferenceGemmGpu : public tessel::testing::GpuTest {
 protected:
  // Runs one shape and checks it: every output element finite (the NaN poison overwritten), and
  // ‖C − ref‖/‖ref‖ against float64 on sampled entries (all four corners included).
  void check(GemmType type, int cluster_m, bool overlap, Shape s) {
    SCOPED_TRACE(to_string(type) + " cluster " + std::to_string(cluster_m) +
                 (overlap ? " overlap " : " ") + std::to_string(s.m) + "x" + std::to_string(s.n) +
                 "x" + std::to_string(s.k));
    const bool bf16 = type == GemmType::bf16;
    const std::uint64_t seed = runtime::fresh_seed();
    auto a = tessel::testing::random_half_bits(bf16, static_cast<std::size_t>(s.m) * s.k, seed);
    auto b = tessel::testing::random_half_bits(bf16, static_cast<std::size_t>(s.n) * s.k, seed + 1);
    DeviceBuffer a_device = DeviceBuffer::from_host(a), b_device = DeviceBuffer::from_host(b);
    DeviceBuffer c_device(static_cast<std::size_t>(s.m) * s.n * 2);
    c_device.fill_bytes(0xFF);
    ReferenceGemm gemm(type, {cluster_m, 8, overlap});
    gemm.run(a_device.ptr(), b_device.ptr(), c_device.ptr(), s.m, s.n, s.k, nullptr);
    runtime::context().synchronize();
    auto c = c_device.to_host<std::uint16_t>();
    std::size_t not_finite = 0;
    for (auto bits : c)
      not_finite += !std::isfinite(tessel::testing::half_bits_to_float(bf16, bits));
    EXPECT_EQ(not_finite, 0u) << "seed " << seed;
    std::mt19937_64 rng(seed);
    std::vector<std::pair<int, int>> picks = {
        {0, 0}, {0, s.n - 1}, {s.m - 1, 0}, {s.m - 1, s.n - 1}};
    for (int i = 0; i < 4000; ++i) picks.push_back({int(rng() % s.m), int(rng() % s.n)});
    std::vector<float> got;
    std::vector<double> ref;
    for (auto [i, j] : picks) {
      double sum = 0;
      for (int p = 0; p < s.k; ++p) {
        sum += double(tessel::testing::half_bits_to_float(bf16, a[std::size_t(i) * s.k + p])) *
               tessel::testing::half_bits_to_float(bf16, b[std::size_t(j) * s.k + p]);
      }
      ref.push_back(sum);
      got.push_back(tessel::testing::half_bits_to_float(bf16, c[std::size_t(i) * s.n + j]));
    }
    // Rounding the output to 16 bits dominates: about 2^-11 relative (f16), 2^-8 (bf16).
    const double tolerance = bf16 ? 6e-3 : 1e-3;
    EXPECT_LT(runtime::relative_error(std::span<const float>(got), std::span<const double>(ref)),
              tolerance)
        << "seed " << seed;
  }
};

TEST_F(ReferenceGemmGpu, SquareAndRaggedShapesMatchFloat64) {
  std::vector<Shape> shapes = {{1000, 1000, 1000}, {8191, 4097, 520}, {129, 264, 72},    {1, 8, 8},
                               {300, 200, 8},      {777, 1024, 4104}, {2048, 2048, 2048}};
  // Under compute-sanitizer (slow), TESSEL_TEST_SMALL=1 keeps shapes that still cover both
  // epilogues, partial tiles in M, N and K, and more tiles than CTAs.
  if (const char* small = std::getenv("TESSEL_TEST_SMALL"); small && std::string(small) == "1") {
    shapes = {{129, 264, 72}, {333, 517, 136}, {4096, 2048, 64}};
  }
  for (GemmType type : {GemmType::f16, GemmType::bf16}) {
    for (int variant = 0; variant < 3; ++variant) {  // cluster 1, cluster 2, cluster 2 overlapped
      for (Shape s : shapes) check(type, variant == 0 ? 1 : 2, variant == 2, s);
    }
  }
}

TEST_F(ReferenceGemmGpu, EmptyKGivesZerosAndEmptyOutputIsANoOp) {
  ReferenceGemm gemm(GemmType::f16);
  DeviceBuffer c(64 * 72 * 2);
  c.fill_bytes(0xFF);
  gemm.run(0, 0, c.ptr(), 64, 72, 0, nullptr);
  runtime::context().synchronize();
  for (auto bits : c.to_host<std::uint16_t>()) ASSERT_EQ(bits, 0u);
  c.fill_bytes(0xFF);
  gemm.run(0, 0, c.ptr(), 0, 72, 16, nullptr);
  runtime::context().synchronize();
  for (auto bits : c.to_host<std::uint16_t>()) ASSERT_EQ(bits, 0xFFFFu);
}

}  // namespace
}  // namespace tessel::reference
