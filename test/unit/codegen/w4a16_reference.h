// Host references shared by the W4A16 and MoE codegen and GPU tests: f16 rounding as the
// interpreter does it, the packed nibble order of examples/kernels/gemm_w4a16_packed.tir and the
// fp8 byte order of examples/kernels/moe_w8a16.tir.
#pragma once

#include <cstdint>

namespace tessel::testing {

inline float round_f16(float x) {
  return static_cast<float>(static_cast<_Float16>(x));
}

// Nibble of column c (0..63) in its 64-column block: the packed order (2,4,2,2,2):(4,16,1,2,8).
inline int64_t packed_position(int64_t c) {
  return 4 * (c & 1) + 16 * ((c >> 1) & 3) + ((c >> 3) & 1) + 2 * ((c >> 4) & 1) +
         8 * ((c >> 5) & 1);
}

// Byte of column c (0..63) in its 64-column block of moe_w8a16's fp8 weights: the order
// (2,4,2,4):(1,16,2,4).
inline int64_t fp8_position(int64_t c) {
  return (c & 1) + 16 * ((c >> 1) & 3) + 2 * ((c >> 3) & 1) + 4 * ((c >> 4) & 3);
}

}  // namespace tessel::testing
