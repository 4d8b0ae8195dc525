// Exact element-type arithmetic: float formats and host tensors.
#include "interp/numerics.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/int_arith.h"
#include "support/diagnostics.h"
#include "support/float_formats.h"

namespace tessel::interp {
namespace {

// The narrow float formats are converted by support/float_formats (shared with the runtime's host
// helpers), which rounds straight from double.
NarrowFloat narrow_format(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f16:
      return NarrowFloat::f16;
    case ScalarKind::bf16:
      return NarrowFloat::bf16;
    case ScalarKind::f8e4m3:
      return NarrowFloat::e4m3;
    case ScalarKind::f8e5m2:
      return NarrowFloat::e5m2;
    default:
      TESSEL_ASSERT(false, "no small float format for ", ir::to_string(kind));
      return NarrowFloat::f16;
  }
}

}  // namespace

uint64_t encode_float(ScalarKind kind, double value) {
  if (kind == ScalarKind::f64) {
    uint64_t bits;
    std::memcpy(&bits, &value, 8);
    return bits;
  }
  if (kind == ScalarKind::f32) {
    float f = static_cast<float>(value);  // the hardware conversion rounds to nearest even
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  return encode_narrow_float(narrow_format(kind), value);
}

double decode_float(ScalarKind kind, uint64_t bits) {
  if (kind == ScalarKind::f64) {
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  if (kind == ScalarKind::f32) {
    auto b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  return decode_narrow_float(narrow_format(kind), static_cast<std::uint32_t>(bits));
}

double round_to(ScalarKind kind, double value) {
  if (kind == ScalarKind::f64) return value;
  if (kind == ScalarKind::f32) return static_cast<float>(value);
  return decode_float(kind, encode_float(kind, value));
}

int64_t float_to_int(ScalarKind kind, double value) {
  if (kind == ScalarKind::i1) return value != 0;
  if (std::isnan(value)) return 0;
  int bits = ir::bit_width(kind);
  double lo, hi;
  if (ir::is_signed(kind)) {
    lo = -std::ldexp(1.0, bits - 1);
    hi = std::ldexp(1.0, bits - 1);  // exclusive
  } else {
    lo = 0;
    hi = std::ldexp(1.0, bits);
  }
  double t = std::trunc(value);
  if (t <= lo) return ir::is_signed(kind) ? static_cast<int64_t>(lo) : 0;
  if (t >= hi) {
    if (bits >= 64) return ir::is_signed(kind) ? INT64_MAX : -1;  // u64 max held as all ones
    return static_cast<int64_t>(hi) - 1;
  }
  return static_cast<int64_t>(t);
}

HostTensor::HostTensor(ScalarKind element, std::vector<int64_t> shape)
    : element_(element), shape_(std::move(shape)) {
  size_ = 1;
  for (int64_t e : shape_) size_ *= e;
  int bits = ir::bit_width(element_);
  if (element_ == ScalarKind::i1) bits = 8;
  bytes_.assign(static_cast<size_t>((size_ * bits + 7) / 8), 0);
}

uint64_t HostTensor::get_bits(int64_t i) const {
  TESSEL_ASSERT(i >= 0 && i < size_, "host tensor index ", i, " out of range ", size_);
  int bits = ir::bit_width(element_);
  if (bits == 4) return (bytes_[i / 2] >> ((i % 2) * 4)) & 0xF;
  if (bits == 1) bits = 8;
  uint64_t v = 0;
  std::memcpy(&v, &bytes_[static_cast<size_t>(i) * (bits / 8)], bits / 8);  // little-endian host
  return v;
}

void HostTensor::set_bits(int64_t i, uint64_t value) {
  TESSEL_ASSERT(i >= 0 && i < size_, "host tensor index ", i, " out of range ", size_);
  int bits = ir::bit_width(element_);
  if (bits == 4) {
    uint8_t& byte = bytes_[i / 2];
    int shift = (i % 2) * 4;
    byte = static_cast<uint8_t>((byte & ~(0xF << shift)) | ((value & 0xF) << shift));
    return;
  }
  if (bits == 1) bits = 8;
  std::memcpy(&bytes_[static_cast<size_t>(i) * (bits / 8)], &value, bits / 8);
}

double HostTensor::get_float(int64_t i) const {
  if (ir::is_float(element_)) return decode_float(element_, get_bits(i));
  return static_cast<double>(get_int(i));
}

int64_t HostTensor::get_int(int64_t i) const {
  if (ir::is_float(element_)) return float_to_int(ScalarKind::i64, get_float(i));
  return ir::wrap_integer(element_, static_cast<int64_t>(get_bits(i)));
}

void HostTensor::set_float(int64_t i, double value) {
  if (ir::is_float(element_)) {
    set_bits(i, encode_float(element_, value));
  } else {
    set_int(i, float_to_int(element_, value));
  }
}

void HostTensor::set_int(int64_t i, int64_t value) {
  if (ir::is_float(element_)) {
    set_float(i, static_cast<double>(value));
  } else {
    set_bits(i, static_cast<uint64_t>(ir::wrap_integer(element_, value)));
  }
}

}  // namespace tessel::interp
