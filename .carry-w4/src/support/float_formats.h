// Host-side conversions between float and the GPU's narrow float formats, rounding to nearest even.
//
// f16 (IEEE binary16), bf16 (bfloat16), f8e4m3 and f8e5m2 (OCP FP8). Conversions *to* a narrow format
// round to nearest, ties to even. Overflow follows the format: f16 and bf16 go to infinity; the fp8
// formats saturate to their largest finite value, as the GPU's `cvt.rn.satfinite` does (e4m3 has no
// infinity at all). NaN stays NaN. Conversions *from* a narrow format are exact.
#pragma once

#include <cstdint>

namespace tessel {

enum class NarrowFloat { f16, bf16, e4m3, e5m2 };

// `value` rounded to nearest-even into `format`, straight from double (no double rounding through
// float): the interpreter's conversion. Returns the encoding in the low bits.
std::uint32_t encode_narrow_float(NarrowFloat format, double value);
// The exact value of an encoding of `format`.
double decode_narrow_float(NarrowFloat format, std::uint32_t bits);

// The float entry points below are the same conversions for float inputs (f16 and bf16 take a fast
// bit-level path, used for filling large matrices).

std::uint16_t float_to_f16_bits(float value);
float f16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(std::uint16_t bits);
std::uint8_t float_to_e4m3_bits(float value);
float e4m3_bits_to_float(std::uint8_t bits);
std::uint8_t float_to_e5m2_bits(float value);
float e5m2_bits_to_float(std::uint8_t bits);

}  // namespace tessel
