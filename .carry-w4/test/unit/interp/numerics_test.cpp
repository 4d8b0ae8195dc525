// Element encodings and round-to-nearest-even conversion, against known bit patterns and against
// brute force over every encoding of each small format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "interp/numerics.h"

namespace tessel::interp {
namespace {

TEST(Numerics, F16KnownValues) {
  EXPECT_EQ(encode_float(ScalarKind::f16, 1.0), 0x3C00u);
  EXPECT_EQ(encode_float(ScalarKind::f16, -2.0), 0xC000u);
  EXPECT_EQ(encode_float(ScalarKind::f16, 65504.0), 0x7BFFu);
  EXPECT_EQ(encode_float(ScalarKind::f16, 65520.0), 0x7C00u);  // rounds up to infinity
  EXPECT_EQ(encode_float(ScalarKind::f16, 65519.0), 0x7BFFu);
  EXPECT_EQ(encode_float(ScalarKind::f16, std::ldexp(1.0, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(encode_float(ScalarKind::f16, std::ldexp(1.0, -25)), 0x0000u);  // tie to even: 0
  EXPECT_EQ(encode_float(ScalarKind::f16, std::ldexp(3.0, -25)), 0x0002u);  // tie to even: 2
  EXPECT_EQ(encode_float(ScalarKind::f16, 1.0 + std::ldexp(1.0, -11)), 0x3C00u);  // tie to even
  EXPECT_EQ(encode_float(ScalarKind::f16, 1.0 + std::ldexp(3.0, -11)), 0x3C02u);  // tie to even
  EXPECT_EQ(encode_float(ScalarKind::f16, -0.0), 0x8000u);
  EXPECT_EQ(encode_float(ScalarKind::f16, std::numeric_limits<double>::infinity()), 0x7C00u);
  EXPECT_TRUE(std::isnan(decode_float(ScalarKind::f16, encode_float(ScalarKind::f16, NAN))));
  EXPECT_EQ(decode_float(ScalarKind::f16, 0x3555), 0.333251953125);
}

TEST(Numerics, Bf16AndFp8KnownValues) {
  EXPECT_EQ(encode_float(ScalarKind::bf16, 1.0), 0x3F80u);
  EXPECT_EQ(encode_float(ScalarKind::bf16, 1.0 + std::ldexp(1.0, -8)), 0x3F80u);  // tie to even
  EXPECT_EQ(encode_float(ScalarKind::bf16, 1.0 + std::ldexp(3.0, -8)), 0x3F82u);
  EXPECT_EQ(encode_float(ScalarKind::bf16, 3.4e38), 0x7F80u);  // overflow to infinity
  // E4M3FN: max 448, saturating, no infinity.
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, 448.0), 0x7Eu);
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, 1000.0), 0x7Eu);
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, -1e9), 0xFEu);
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, std::numeric_limits<double>::infinity()), 0x7Eu);
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, 1.0), 0x38u);
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, std::ldexp(1.0, -9)), 0x01u);  // smallest subnormal
  EXPECT_TRUE(std::isnan(decode_float(ScalarKind::f8e4m3, 0x7F)));
  EXPECT_EQ(decode_float(ScalarKind::f8e4m3, 0x7E), 448.0);
  // E5M2: max 57344, saturating conversion.
  EXPECT_EQ(encode_float(ScalarKind::f8e5m2, 57344.0), 0x7Bu);
  EXPECT_EQ(encode_float(ScalarKind::f8e5m2, 1e6), 0x7Bu);
  EXPECT_EQ(encode_float(ScalarKind::f8e5m2, 1.0), 0x3Cu);
  EXPECT_TRUE(std::isinf(decode_float(ScalarKind::f8e5m2, 0x7C)));
}

// Every finite encoding decodes to a value that encodes back to itself, and the midpoint between
// two neighbours rounds to the one with the even encoding: RNE, checked exhaustively.
void check_format(ScalarKind kind, int bits) {
  std::vector<std::pair<double, uint64_t>> values;
  for (uint64_t b = 0; b < (uint64_t{1} << bits); ++b) {
    double v = decode_float(kind, b);
    if (std::isnan(v) || std::isinf(v) || std::signbit(v)) continue;
    EXPECT_EQ(encode_float(kind, v), b) << ir::to_string(kind) << " bits " << b;
    values.emplace_back(v, b);
  }
  std::sort(values.begin(), values.end());
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    double mid = (values[i].first + values[i + 1].first) / 2;  // exact in double
    uint64_t even = (values[i].second % 2 == 0) ? values[i].second : values[i + 1].second;
    EXPECT_EQ(encode_float(kind, mid), even) << ir::to_string(kind) << " midpoint " << mid;
    EXPECT_EQ(encode_float(kind, std::nextafter(mid, 0.0)), values[i].second);
    EXPECT_EQ(encode_float(kind, std::nextafter(mid, 1e300)), values[i + 1].second);
  }
}

TEST(Numerics, ExhaustiveRoundTripAndTiesToEven) {
  check_format(ScalarKind::f16, 16);
  check_format(ScalarKind::bf16, 16);
  check_format(ScalarKind::f8e4m3, 8);
  check_format(ScalarKind::f8e5m2, 8);
}

TEST(Numerics, F16MatchesTheFloatPathForRandomFloats) {
  // Rounding a float to f16 directly equals rounding its exact double value: no double rounding.
  uint32_t state = 12345;
  for (int i = 0; i < 100000; ++i) {
    state = state * 1664525u + 1013904223u;
    float f;
    uint32_t bits = (state & 0x8FFFFFFFu) | 0x30000000u;  // exponents around 1
    std::memcpy(&f, &bits, 4);
    double exact = f;
    double r = round_to(ScalarKind::f16, exact);
    // The result is the nearest f16: no f16 is strictly closer.
    uint64_t e = encode_float(ScalarKind::f16, exact);
    double up = decode_float(ScalarKind::f16, e + 1), down = decode_float(ScalarKind::f16, e - 1);
    if (!std::isnan(up) && !std::isinf(up)) {
      EXPECT_LE(std::fabs(r - exact), std::fabs(up - exact));
    }
    if (!std::isnan(down) && !std::isinf(down) && e % 0x8000 != 0) {
      EXPECT_LE(std::fabs(r - exact), std::fabs(down - exact));
    }
  }
}

TEST(Numerics, FloatToIntTruncatesAndSaturates) {
  EXPECT_EQ(float_to_int(ScalarKind::i8, 3.9), 3);
  EXPECT_EQ(float_to_int(ScalarKind::i8, -3.9), -3);
  EXPECT_EQ(float_to_int(ScalarKind::i8, 1000.0), 127);
  EXPECT_EQ(float_to_int(ScalarKind::i8, -1000.0), -128);
  EXPECT_EQ(float_to_int(ScalarKind::u8, -5.0), 0);
  EXPECT_EQ(float_to_int(ScalarKind::i4, 9.0), 7);
  EXPECT_EQ(float_to_int(ScalarKind::u4, 20.0), 15);
  EXPECT_EQ(float_to_int(ScalarKind::i32, NAN), 0);
  EXPECT_EQ(float_to_int(ScalarKind::i1, 0.5), 1);
}

TEST(HostTensor, PackedInt4AndEncodings) {
  HostTensor t(ScalarKind::i4, {2, 3});
  EXPECT_EQ(t.bytes().size(), 3u);
  for (int i = 0; i < 6; ++i) t.set_int(i, i - 3);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.get_int(i), i - 3);
  EXPECT_EQ(t.bytes()[0], 0xEDu);  // element 0 (-3 = 0xD) low, element 1 (-2 = 0xE) high
  t.set_int(0, 9);                 // wraps to -7
  EXPECT_EQ(t.get_int(0), -7);
  HostTensor u(ScalarKind::u4, {3});
  u.set_int(2, 15);
  EXPECT_EQ(u.get_int(2), 15);
  EXPECT_EQ(u.bytes()[1], 0x0Fu);
  HostTensor h(ScalarKind::f16, {2});
  h.set_float(1, 1.0);
  EXPECT_EQ(h.bytes()[2], 0x00);
  EXPECT_EQ(h.bytes()[3], 0x3C);
  EXPECT_EQ(h.get_float(1), 1.0);
  h.set_float(0, 0.1);
  EXPECT_EQ(h.get_bits(0), 0x2E66u);
}

}  // namespace
}  // namespace tessel::interp
