// Content hashing: SHA-256 for keys that must not collide (the on-disk kernel cache), FNV-1a for
// cheap in-memory hashing of IR and layouts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

// Incremental SHA-256 (FIPS 180-4). Feed bytes with update(), read the digest once with hex().
class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view bytes);
  Sha256& update(const void* data, std::size_t size);
  // Finishes the hash and returns the 32-byte digest as 64 lowercase hex digits. Calling update()
  // afterwards is a tessel bug.
  std::string hex();

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
  bool finished_ = false;
};

// SHA-256 of one string, in hex.
std::string sha256_hex(std::string_view bytes);

// 64-bit FNV-1a; `seed` chains several pieces.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);

// Mixes `value` into `seed` (boost::hash_combine's recipe, widened to 64 bits).
inline std::uint64_t hash_combine(std::uint64_t seed, std::uint64_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

}  // namespace tessel
