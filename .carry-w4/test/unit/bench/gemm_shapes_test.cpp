#include <gtest/gtest.h>

#include "bench/harness/gemm_bench.h"
#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

TEST(GemmShapes, ParsesLists) {
  auto shapes = parse_gemm_shapes("8192x8192x4096,1000x1000x1000,8191x4097x520");
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].k, 4096);
  EXPECT_EQ(shapes[2].m, 8191);
  EXPECT_EQ(shapes[2].n, 4097);
  EXPECT_EQ(shapes[2].str(), "8191x4097x520");
}

TEST(GemmShapes, BadShapesNameTheItemAndColumn) {
  for (std::string bad : {"12x", "12x4", "0x4x4", "ax4x4", "4x4x4,", "4x4x4x4", "4x-4x4", ""}) {
    try {
      parse_gemm_shapes(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const UserError& error) {
      EXPECT_NE(error.message().find("expected MxNxK with positive integers"), std::string::npos)
          << error.what();
      EXPECT_EQ(error.location().file, "--shapes");
      EXPECT_GT(error.location().column, 0);
    }
  }
}

TEST(GemmShapes, Tolerances) {
  EXPECT_LT(gemm_tolerance(GemmElement::f16), gemm_tolerance(GemmElement::bf16));
}

}  // namespace
}  // namespace tessel::bench
