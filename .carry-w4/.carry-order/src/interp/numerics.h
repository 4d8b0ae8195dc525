// Exact element-type arithmetic for the interpreter: encodings of the small float formats,
// round-to-nearest-even conversion, and host tensors that store elements in their device encoding.
//
// Formats: f16 (IEEE binary16), bf16, f8e4m3 (OCP E4M3FN: no infinities, max 448, NaN = S.1111.111)
// and f8e5m2 (OCP E5M2, IEEE-like). Conversion to any of them rounds to nearest, ties to even, from
// the exact value (never through an intermediate format, so there is no double rounding).
// Overflow gives infinity for f16/bf16, and saturates to the largest finite value for both fp8
// formats, as the device's `cvt.rn.satfinite` does. NaN stays NaN.
// Packed int4 (i4, u4) stores two elements per byte, element 2k in the low nibble of byte k.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/type.h"

namespace tessel::interp {

using ir::ScalarKind;

// The bits of `value` rounded into a float format (f16, bf16, f8e4m3, f8e5m2, f32, f64).
uint64_t encode_float(ScalarKind kind, double value);
// The exact value of the bits of a float format.
double decode_float(ScalarKind kind, uint64_t bits);
// decode(encode(value)): `value` rounded to the nearest representable value of `kind`.
double round_to(ScalarKind kind, double value);

// Float to integer: truncate toward zero, saturate to the type's range; NaN gives 0; i1 is x != 0.
int64_t float_to_int(ScalarKind kind, double value);

// A tensor in host memory with elements in their device encoding (row-major unless a layout says
// otherwise): what the interpreter reads and writes for a global tensor parameter.
class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(ScalarKind element, std::vector<int64_t> shape);

  ScalarKind element() const { return element_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size() const { return size_; }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // Element i (row-major) as its exact value: floats as double, integers as int64.
  double get_float(int64_t i) const;
  int64_t get_int(int64_t i) const;
  // Stores a value rounded (floats, RNE) or wrapped (integers) into element i.
  void set_float(int64_t i, double value);
  void set_int(int64_t i, int64_t value);
  // The raw encoding of element i.
  uint64_t get_bits(int64_t i) const;
  void set_bits(int64_t i, uint64_t bits);

 private:
  ScalarKind element_ = ScalarKind::f32;
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace tessel::interp
