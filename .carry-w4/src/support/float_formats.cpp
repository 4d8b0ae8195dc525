#include "support/float_formats.h"

#include <bit>
#include <cmath>
#include <limits>

namespace tessel {
namespace {

// A narrow binary float format: 1 sign bit, `exponent_bits`, `mantissa_bits`.
struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  double max_finite;
  bool saturate;  // overflow saturates (fp8, satfinite) instead of going to infinity
  std::uint32_t nan_bits;
  std::uint32_t infinity_bits;  // unused when saturate
};

constexpr Format kE4M3 = {4, 3, 7, 448.0, true, 0x7f, 0};
constexpr Format kE5M2 = {5, 2, 15, 57344.0, true, 0x7e, 0x7c};

// Rounds `value` to the nearest representable number of `format` (ties to even) and encodes it.
std::uint32_t encode(double value, const Format& format) {
  std::uint32_t sign = std::signbit(value) ? 1u << (format.exponent_bits + format.mantissa_bits) : 0;
  if (std::isnan(value)) return format.nan_bits;
  double magnitude = std::fabs(value);
  auto overflow = [&] {
    if (format.saturate) return sign | encode(format.max_finite, format);
    return sign | format.infinity_bits;
  };
  if (std::isinf(magnitude)) return overflow();
  if (magnitude == 0) return sign;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = m * 2^exponent, m in [0.5, 1)
  int unbiased = std::max(exponent - 1, 1 - format.bias);  // subnormals share the minimum exponent
  double quantum = std::ldexp(1.0, unbiased - format.mantissa_bits);
  double rounded = std::nearbyint(magnitude / quantum) * quantum;  // default mode: ties to even
  if (rounded > format.max_finite) return overflow();
  if (rounded == 0) return sign;
  std::frexp(rounded, &exponent);
  unbiased = exponent - 1;
  if (unbiased < 1 - format.bias) {  // subnormal
    auto mantissa = static_cast<std::uint32_t>(
        std::ldexp(rounded, format.bias - 1 + format.mantissa_bits));
    return sign | mantissa;
  }
  auto mantissa = static_cast<std::uint32_t>(
      (std::ldexp(rounded, -unbiased) - 1.0) * std::ldexp(1.0, format.mantissa_bits));
  auto biased = static_cast<std::uint32_t>(unbiased + format.bias);
  return sign | (biased << format.mantissa_bits) | mantissa;
}

double decode(std::uint32_t bits, const Format& format, bool has_infinity) {
  int total = format.exponent_bits + format.mantissa_bits;
  bool negative = (bits >> total) & 1;
  std::uint32_t exponent = (bits >> format.mantissa_bits) & ((1u << format.exponent_bits) - 1);
  std::uint32_t mantissa = bits & ((1u << format.mantissa_bits) - 1);
  std::uint32_t max_exponent = (1u << format.exponent_bits) - 1;
  double magnitude;
  if (has_infinity && exponent == max_exponent) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (!has_infinity && exponent == max_exponent &&
             mantissa == (1u << format.mantissa_bits) - 1) {
    magnitude = std::numeric_limits<double>::quiet_NaN();  // e4m3: S.1111.111 is the only NaN
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - format.bias - format.mantissa_bits);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -format.mantissa_bits),
                           static_cast<int>(exponent) - format.bias);
  }
  return negative ? -magnitude : magnitude;
}

constexpr Format kF16 = {5, 10, 15, 65504.0, false, 0x7e00, 0x7c00};
constexpr Format kBF16 = {8, 7, 127, 0x1.fep127, false, 0x7fc0, 0x7f80};

const Format& format_of(NarrowFloat format) {
  switch (format) {
    case NarrowFloat::f16: return kF16;
    case NarrowFloat::bf16: return kBF16;
    case NarrowFloat::e4m3: return kE4M3;
    case NarrowFloat::e5m2: return kE5M2;
  }
  return kF16;
}

}  // namespace

std::uint16_t float_to_f16_bits(float value) {
  // The classic bit-level rounding (fast: host fills of large matrices go through here).
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  std::uint32_t sign = (x >> 16) & 0x8000;
  x &= 0x7fffffff;
  if (x >= 0x7f800000) return static_cast<std::uint16_t>(sign | (x > 0x7f800000 ? 0x7e00 : 0x7c00));
  if (x >= 0x477ff000) return static_cast<std::uint16_t>(sign | 0x7c00);  // rounds to >= 65520
  if (x < 0x38800000) {
    // Below 2^-14 the result is subnormal: adding 0.5f lines the f16 quantum 2^-24 up with the
    // float's last mantissa bit, so the FPU's own round-to-nearest-even does the rounding.
    float shifted = std::bit_cast<float>(x) + 0.5f;
    return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000));
  }
  std::uint32_t odd = (x >> 13) & 1;
  x += 0xc8000fff + odd;  // rebias the exponent by (15 - 127) and round half to even
  return static_cast<std::uint16_t>(sign | (x >> 13));
}

std::uint32_t encode_narrow_float(NarrowFloat format, double value) {
  return encode(value, format_of(format));
}

double decode_narrow_float(NarrowFloat format, std::uint32_t bits) {
  return decode(bits, format_of(format), format != NarrowFloat::e4m3);
}

float f16_bits_to_float(std::uint16_t bits) {
  return static_cast<float>(decode(bits, kF16, true));
}

std::uint16_t float_to_bf16_bits(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<std::uint16_t>((x >> 16) | 0x0040);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<std::uint16_t>(x >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint8_t float_to_e4m3_bits(float value) {
  return static_cast<std::uint8_t>(encode(value, kE4M3));
}
float e4m3_bits_to_float(std::uint8_t bits) {
  return static_cast<float>(decode(bits, kE4M3, false));
}
std::uint8_t float_to_e5m2_bits(float value) {
  return static_cast<std::uint8_t>(encode(value, kE5M2));
}
float e5m2_bits_to_float(std::uint8_t bits) {
  return static_cast<float>(decode(bits, kE5M2, true));
}

}  // namespace tessel
