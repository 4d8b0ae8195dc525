#include "support/float_formats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace tessel {
namespace {

// The contract of a round-to-nearest-even conversion, checked against the format's own neighbours:
// the result is a representable value no farther from x than either neighbour, and on a tie its last
// mantissa bit is 0.
template <typename Encode, typename Decode>
void check_rounding(float x, Encode encode, Decode decode, const char* format) {
  auto bits = encode(x);
  double result = decode(bits);
  if (std::isnan(x)) {
    EXPECT_TRUE(std::isnan(result)) << format;
    return;
  }
  if (std::isinf(result)) return;  // overflow: checked separately
  double error = std::fabs(double(x) - result);
  for (int step : {-1, 1}) {
    auto neighbour_bits = static_cast<decltype(bits)>(bits + step);
    double neighbour = decode(neighbour_bits);
    if (std::isnan(neighbour) || std::isinf(neighbour)) continue;
    if (std::signbit(neighbour) != std::signbit(result) && neighbour != 0) continue;
    double neighbour_error = std::fabs(double(x) - neighbour);
    EXPECT_LE(error, neighbour_error) << format << " x=" << x << " got " << result;
    if (error == neighbour_error && error != 0) {
      EXPECT_EQ(bits & 1, 0) << format << " tie must go to even, x=" << x;
    }
  }
}

TEST(FloatFormats, F16AndBf16RoundToNearestEven) {
  std::mt19937 generator(12345);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int i = 0; i < 200000; ++i) {
    // Random bit patterns, biased into the formats' ranges: exponents around zero.
    std::uint32_t bits = any_bits(generator);
    bits = (bits & 0x807fffff) | ((100 + (bits >> 23) % 60) << 23);
    float x = std::bit_cast<float>(bits);
    check_rounding(x, float_to_f16_bits, f16_bits_to_float, "f16");
    check_rounding(x, float_to_bf16_bits, bf16_bits_to_float, "bf16");
    check_rounding(x, float_to_e4m3_bits, e4m3_bits_to_float, "e4m3");
    check_rounding(x, float_to_e5m2_bits, e5m2_bits_to_float, "e5m2");
  }
}

TEST(FloatFormats, EveryEncodingRoundTrips) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f16 = f16_bits_to_float(static_cast<std::uint16_t>(bits));
    if (!std::isnan(f16)) {
      EXPECT_EQ(float_to_f16_bits(f16), bits) << std::hex << bits;
    }
    float bf16 = bf16_bits_to_float(static_cast<std::uint16_t>(bits));
    if (!std::isnan(bf16)) {
      EXPECT_EQ(float_to_bf16_bits(bf16), bits) << std::hex << bits;
    }
  }
  for (std::uint32_t bits = 0; bits < 0x100; ++bits) {
    float e4m3 = e4m3_bits_to_float(static_cast<std::uint8_t>(bits));
    if (!std::isnan(e4m3)) {
      EXPECT_EQ(float_to_e4m3_bits(e4m3), bits) << std::hex << bits;
    }
    float e5m2 = e5m2_bits_to_float(static_cast<std::uint8_t>(bits));
    if (!std::isnan(e5m2) && !std::isinf(e5m2)) {
      EXPECT_EQ(float_to_e5m2_bits(e5m2), bits) << std::hex << bits;
    }
  }
}

TEST(FloatFormats, KnownValuesAndOverflow) {
  EXPECT_EQ(float_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);  // halfway to the next binade: rounds to inf
  EXPECT_EQ(float_to_f16_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_f16_bits(0x1p-25f), 0x0000);  // tie with zero goes to even (zero)
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(e4m3_bits_to_float(0x7e), 448.0f);
  EXPECT_EQ(float_to_e4m3_bits(1000.0f), 0x7e);  // satfinite
  EXPECT_EQ(float_to_e4m3_bits(-1000.0f), 0xfe);
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0x7f)));
  EXPECT_EQ(e5m2_bits_to_float(0x7b), 57344.0f);
  EXPECT_EQ(float_to_e5m2_bits(1e6f), 0x7b);
  EXPECT_EQ(e4m3_bits_to_float(0x01), 0x1p-9f);  // smallest e4m3 subnormal
}

// From double, rounding happens once: 1 + 2^-11 + 2^-40 is just above the f16 tie between 1 and
// 1 + 2^-10, so it rounds up; through float the 2^-40 would be lost and the tie would go to 1.
TEST(FloatFormats, NarrowFromDoubleRoundsOnce) {
  double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(encode_narrow_float(NarrowFloat::f16, above_tie), 0x3c01u);
  EXPECT_EQ(float_to_f16_bits(static_cast<float>(above_tie)), 0x3c00u);
  for (NarrowFloat format :
       {NarrowFloat::f16, NarrowFloat::bf16, NarrowFloat::e4m3, NarrowFloat::e5m2}) {
    for (std::uint32_t bits = 0; bits < (format == NarrowFloat::e4m3 || format == NarrowFloat::e5m2
                                             ? 0x100u
                                             : 0x10000u);
         ++bits) {
      double value = decode_narrow_float(format, bits);
      if (std::isfinite(value)) {
        EXPECT_EQ(encode_narrow_float(format, value), bits) << int(format) << " " << bits;
      }
    }
  }
  EXPECT_EQ(encode_narrow_float(NarrowFloat::bf16, 1e300), 0x7f80u);  // overflow to infinity
  EXPECT_EQ(encode_narrow_float(NarrowFloat::e4m3, -1e300), 0xfeu);   // saturates
}

}  // namespace
}  // namespace tessel
