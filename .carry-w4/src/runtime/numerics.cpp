#include "runtime/numerics.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "support/diagnostics.h"

namespace tessel::runtime {
namespace {

// SplitMix64: a small, fast, well-mixed generator; good enough for test data.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  float uniform(float low, float high) {
    return low + (high - low) * static_cast<float>(next() >> 40) * 0x1.0p-24f;
  }
};

// Every f16 value, decoded once: matrices of 10^8 elements are decoded on the host.
const std::vector<float>& f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> values(1 << 16);
    for (std::uint32_t bits = 0; bits < values.size(); ++bits) {
      values[bits] = f16_bits_to_float(static_cast<std::uint16_t>(bits));
    }
    return values;
  }();
  return table;
}

int bytes_of(HostFloat format) { return format == HostFloat::f32 ? 4 : 2; }

template <typename Ref>
double relative_error_impl(std::span<const float> out, std::span<const Ref> ref) {
  if (out.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return std::numeric_limits<double>::infinity();
    double difference = static_cast<double>(out[i]) - static_cast<double>(ref[i]);
    error += difference * difference;
    norm += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  if (norm == 0) return error == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(error / norm);
}

}  // namespace

std::uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

std::vector<std::uint8_t> random_values(HostFloat format, std::size_t count, std::uint64_t seed,
                                        float low, float high) {
  if (!(low < high)) user_error(SourceLocation::unknown(), "random_values: empty range");
  SplitMix64 generator{seed};
  std::vector<std::uint8_t> bytes(count * bytes_of(format));
  for (std::size_t i = 0; i < count; ++i) {
    float value = generator.uniform(low, high);
    if (format == HostFloat::f32) {
      std::memcpy(&bytes[4 * i], &value, 4);
    } else {
      std::uint16_t bits =
          format == HostFloat::f16 ? float_to_f16_bits(value) : float_to_bf16_bits(value);
      std::memcpy(&bytes[2 * i], &bits, 2);
    }
  }
  return bytes;
}

std::vector<float> to_floats(HostFloat format, std::span<const std::uint8_t> bytes) {
  std::size_t width = bytes_of(format);
  if (bytes.size() % width != 0) {
    user_error(SourceLocation::unknown(), "to_floats: ", bytes.size(),
               " bytes is not a whole number of elements");
  }
  std::vector<float> values(bytes.size() / width);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (format == HostFloat::f32) {
      std::memcpy(&values[i], &bytes[4 * i], 4);
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, &bytes[2 * i], 2);
      values[i] = format == HostFloat::f16 ? f16_table()[bits] : bf16_bits_to_float(bits);
    }
  }
  return values;
}

double relative_error(std::span<const float> out, std::span<const double> ref) {
  return relative_error_impl(out, ref);
}

double relative_error(std::span<const float> out, std::span<const float> ref) {
  return relative_error_impl(out, ref);
}

}  // namespace tessel::runtime
