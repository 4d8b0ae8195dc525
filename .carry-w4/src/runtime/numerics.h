// Host helpers for checking GPU results: random fills in narrow formats and relative error.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "support/float_formats.h"

namespace tessel::runtime {

enum class HostFloat { f16, bf16, f32 };

// A fresh seed from the OS (std::random_device): every check draws new inputs. Print it so that a
// failure can be replayed with the same seed.
std::uint64_t fresh_seed();

// `count` values uniform in [low, high), rounded to `format`, as raw bits (2 bytes each for f16 and
// bf16, 4 for f32) ready to upload. Deterministic for a given seed.
std::vector<std::uint8_t> random_values(HostFloat format, std::size_t count, std::uint64_t seed,
                                        float low = -1.0f, float high = 1.0f);

// Decodes raw bits of `format` into floats.
std::vector<float> to_floats(HostFloat format, std::span<const std::uint8_t> bytes);

// ‖out − ref‖₂ / ‖ref‖₂ over all elements, in double. Any NaN or infinity in `out` (or a size
// mismatch) gives +infinity, so such a result never passes a tolerance check; an all-zero reference
// gives 0 if `out` is all zero too, else +infinity.
double relative_error(std::span<const float> out, std::span<const double> ref);
double relative_error(std::span<const float> out, std::span<const float> ref);

}  // namespace tessel::runtime
