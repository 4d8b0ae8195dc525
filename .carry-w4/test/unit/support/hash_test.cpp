#include "support/hash.h"

#include <gtest/gtest.h>

namespace tessel {
namespace {

// Test vectors from FIPS 180-4 / NIST's SHA-256 examples.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += char('a' + i % 26);
  for (std::size_t split = 0; split <= text.size(); split += 7) {
    Sha256 hasher;
    hasher.update(std::string_view(text).substr(0, split));
    hasher.update(std::string_view(text).substr(split));
    EXPECT_EQ(hasher.hex(), sha256_hex(text)) << split;
  }
}

TEST(Fnv1a, DistinguishesAndChains) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_NE(fnv1a64("ab"), fnv1a64("ba"));
  EXPECT_EQ(fnv1a64("b", fnv1a64("a")), fnv1a64("ab"));
}

}  // namespace
}  // namespace tessel
