#include "runtime/numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>


namespace tessel {
namespace {

TEST(Numerics, RandomValuesAreFreshInRangeAndRounded) {
  using runtime::HostFloat;
  auto a = runtime::random_values(HostFloat::f16, 4096, 1);
  auto b = runtime::random_values(HostFloat::f16, 4096, 2);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, runtime::random_values(HostFloat::f16, 4096, 1));
  auto values = runtime::to_floats(HostFloat::f16, a);
  ASSERT_EQ(values.size(), 4096u);
  int zeros = 0;
  for (float v : values) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LE(v, 1.0f);
    zeros += v == 0;
  }
  EXPECT_LT(zeros, 10) << "random inputs must not be mostly zeros";
  EXPECT_NE(runtime::fresh_seed(), runtime::fresh_seed());
}

TEST(Numerics, RelativeError) {
  std::vector<float> ref = {3, 4};
  std::vector<float> out = {3, 4.5f};
  EXPECT_NEAR(runtime::relative_error(std::span<const float>(out), std::span<const float>(ref)),
              0.1, 1e-12);
  std::vector<float> nan_out = {3, std::nanf("")};
  EXPECT_TRUE(std::isinf(
      runtime::relative_error(std::span<const float>(nan_out), std::span<const float>(ref))));
  std::vector<float> short_out = {3};
  EXPECT_TRUE(std::isinf(
      runtime::relative_error(std::span<const float>(short_out), std::span<const float>(ref))));
}

}  // namespace
}  // namespace tessel
