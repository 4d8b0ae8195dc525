#include "runtime/tma.h"

#include <gtest/gtest.h>

#include "support/diagnostics.h"

namespace tessel::runtime {
namespace {

// A 2-D f16 matrix of 1000 rows × 520 columns (row-major), loaded in 64×128 boxes.
TmaSpec matrix_spec() {
  TmaSpec spec;
  spec.element = TmaElement::f16;
  spec.address = 0x10000;
  spec.shape = {520, 1000};
  spec.strides_bytes = {520 * 2};
  spec.box = {64, 128};
  spec.swizzle = TmaSwizzle::b128;
  return spec;
}

std::string message_of(const TmaSpec& spec) {
  try {
    validate_tma_spec(spec);
  } catch (const UserError& error) {
    return error.message();
  }
  return "";
}

TEST(TmaSpec, LegalSpecsPass) {
  EXPECT_EQ(message_of(matrix_spec()), "");
  TmaSpec five_d;
  five_d.element = TmaElement::f32;
  five_d.shape = {8, 4, 4, 4, 4};
  five_d.strides_bytes = {32, 128, 512, 2048};
  five_d.box = {4, 2, 2, 2, 2};
  EXPECT_EQ(message_of(five_d), "");
}

TEST(TmaSpec, IllegalSpecsNameTheRule) {
  struct Case {
    std::function<void(TmaSpec&)> change;
    std::string expected;
  };
  std::vector<Case> cases = {
      {[](TmaSpec& s) { s.box = {64, 300}; }, "box[1] = 300 must be in [1, 256]"},
      {[](TmaSpec& s) { s.box = {0, 128}; }, "box[0] = 0 must be in [1, 256]"},
      {[](TmaSpec& s) { s.box = {128, 64}; },
       "the box's inner extent is 256 bytes, wider than the 128-byte swizzle span"},
      {[](TmaSpec& s) { s.box = {4, 64}; }, "it must be a multiple of 16 bytes"},
      {[](TmaSpec& s) { s.strides_bytes = {1038}; }, "TMA needs a multiple of 16"},
      {[](TmaSpec& s) { s.address = 0x10008; }, "is not 16-byte aligned"},
      {[](TmaSpec& s) { s.shape = {}; }, "rank must be 1 to 5"},
      {[](TmaSpec& s) { s.box = {64}; }, "box has 1 extents, shape has 2"},
      {[](TmaSpec& s) { s.strides_bytes = {}; }, "strides_bytes must have rank-1 = 1 entries"},
      {[](TmaSpec& s) { s.shape = {0, 1000}; }, "shape[0] = 0 must be in [1, 2^32]"},
  };
  for (const Case& c : cases) {
    TmaSpec spec = matrix_spec();
    c.change(spec);
    std::string message = message_of(spec);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in '" << message << "'";
    EXPECT_NE(message.find("TMA descriptor"), std::string::npos) << message;
  }
}

TEST(TmaSpec, SwizzleSpans) {
  EXPECT_EQ(swizzle_bytes(TmaSwizzle::none), 0);
  EXPECT_EQ(swizzle_bytes(TmaSwizzle::b32), 32);
  EXPECT_EQ(swizzle_bytes(TmaSwizzle::b64), 64);
  EXPECT_EQ(swizzle_bytes(TmaSwizzle::b128), 128);
  EXPECT_EQ(element_bytes(TmaElement::bf16), 2);
  EXPECT_EQ(element_bytes(TmaElement::f64), 8);
}

}  // namespace
}  // namespace tessel::runtime
