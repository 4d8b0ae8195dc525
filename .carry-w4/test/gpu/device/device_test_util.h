// Helpers shared by the device-library GPU tests: random 16-bit/8-bit matrices and float64 matmuls.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/numerics.h"
#include "support/float_formats.h"

namespace tessel::testing {

// `count` random values in [-1, 1) rounded to f16 / bf16 bits.
inline std::vector<std::uint16_t> random_half_bits(bool bf16, std::size_t count,
                                                   std::uint64_t seed) {
  auto bytes = runtime::random_values(bf16 ? runtime::HostFloat::bf16 : runtime::HostFloat::f16,
                                      count, seed);
  std::vector<std::uint16_t> bits(count);
  std::memcpy(bits.data(), bytes.data(), count * 2);
  return bits;
}

inline float half_bits_to_float(bool bf16, std::uint16_t bits) {
  return bf16 ? bf16_bits_to_float(bits) : f16_bits_to_float(bits);
}

}  // namespace tessel::testing
