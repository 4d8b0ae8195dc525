// TVLayout's construction-time check that every (thread, value) lands inside the tile decides from
// the layout's extreme offsets; this compares it with evaluating every index, on many small TV
// layouts with positive, zero and negative strides.
#include <gtest/gtest.h>

#include <random>

#include "layout/tv_layout.h"
#include "support/diagnostics.h"

namespace tessel::layout {
namespace {

// A mode of 1-3 leaves of extent 1-4 (a leaf alone when 1).
IntTuple random_shape(std::mt19937& rng) {
  std::uniform_int_distribution<int> leaves(1, 3), extent(1, 4);
  int n = leaves(rng);
  if (n == 1) return IntTuple(static_cast<int64>(extent(rng)));
  std::vector<IntTuple> elements;
  for (int i = 0; i < n; ++i) elements.emplace_back(static_cast<int64>(extent(rng)));
  return IntTuple(elements);
}

TEST(TVLayoutRange, ExtremesDecideExactlyAsTheElementWalk) {
  std::mt19937 rng(20261122);
  int inside = 0, outside = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    IntTuple ts = random_shape(rng), vs = random_shape(rng);
    // Strides congruent with the shapes.
    auto strides_for = [&](const IntTuple& s) {
      std::uniform_int_distribution<int> stride(-3, 9);
      if (s.is_leaf()) return IntTuple(static_cast<int64>(stride(rng)));
      std::vector<IntTuple> e;
      for (size_t i = 0; i < s.elements().size(); ++i)
        e.emplace_back(static_cast<int64>(stride(rng)));
      return IntTuple(e);
    };
    Layout layout(IntTuple::tuple({ts, vs}), IntTuple::tuple({strides_for(ts), strides_for(vs)}));
    int64 tile = std::uniform_int_distribution<int>(1, 64)(rng);
    bool expect_inside = true;
    for (int64 i = 0; i < layout.size(); ++i) {
      int64 x = layout(i);
      expect_inside = expect_inside && x >= 0 && x < tile;
    }
    bool constructed = true;
    std::string message;
    try {
      TVLayout tv(layout, IntTuple(tile));
    } catch (const UserError& e) {
      constructed = false;
      message = e.what();
    }
    EXPECT_EQ(constructed, expect_inside) << layout.str() << " over a tile of " << tile;
    if (!constructed) {
      EXPECT_NE(message.find("outside the tile"), std::string::npos) << message;
    }
    (expect_inside ? inside : outside)++;
  }
  // Both outcomes are exercised.
  EXPECT_GT(inside, 200);
  EXPECT_GT(outside, 200);
}

}  // namespace
}  // namespace tessel::layout
