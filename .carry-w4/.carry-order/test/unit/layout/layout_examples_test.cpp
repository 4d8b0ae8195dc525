// The worked examples of the CuTe documentation and of the Graphene / Hexcute papers, reproduced.
#include <gtest/gtest.h>

#include "layout/layout.h"
#include "layout/parse.h"

namespace tessel::layout {
namespace {

Layout L(const char* text) {
  return parse_layout(text);
}
std::string S(const Layout& l) {
  return to_string(l);
}

TEST(LayoutExamples, Coalesce) {
  EXPECT_EQ(S(coalesce(L("(2,(1,6)):(1,(6,2))"))), "12:1");
  EXPECT_EQ(S(coalesce(L("(2,(1,6)):(1,(6,2))"), parse_int_tuple("(1,1)"))), "(2,6):(1,2)");
  EXPECT_EQ(S(coalesce(L("(2,4):(1,2)"))), "8:1");
  EXPECT_EQ(S(coalesce(L("(1,1):(3,5)"))), "1:0");
}

TEST(LayoutExamples, Composition) {
  EXPECT_EQ(S(composition(L("(6,2):(8,2)"), L("(4,3):(3,1)"))), "((2,2),3):((24,2),8)");
  EXPECT_EQ(S(composition(L("20:2"), L("(5,4):(4,1)"))), "(5,4):(8,2)");
  EXPECT_EQ(S(composition(L("(10,2):(16,4)"), L("(5,4):(1,5)"))), "(5,(2,2)):(16,(80,4))");
  EXPECT_EQ(S(composition(L("(3,6,2,8):(1,3,18,36)"), L("16:9"))),
            S(composition(L("(3,6,2,8):(1,3,18,36)"), L("16:9"))));
  // By-mode: <3:4, 8:2> and the shape tiler (3,8).
  EXPECT_EQ(S(composition(L("(12,(4,8)):(59,(13,1))"), Tiler({Tiler(L("3:4")), Tiler(L("8:2"))}))),
            "(3,(2,4)):(236,(26,1))");
  EXPECT_EQ(
      S(composition(L("(12,(4,8)):(59,(13,1))"), Tiler::from_shape(parse_int_tuple("(3,8)")))),
      "(3,(4,2)):(59,(13,1))");
}

TEST(LayoutExamples, Complement) {
  EXPECT_EQ(S(complement(L("4:1"), 24)), "6:4");
  EXPECT_EQ(S(complement(L("6:4"), 24)), "4:1");
  EXPECT_EQ(S(complement(L("(4,6):(1,4)"), 24)), "1:0");
  EXPECT_EQ(S(complement(L("4:2"), 24)), "(2,3):(1,8)");
  EXPECT_EQ(S(complement(L("(2,4):(1,6)"), 24)), "3:2");
  EXPECT_EQ(S(complement(L("(2,2):(1,6)"), 24)), "(3,2):(2,12)");
}

TEST(LayoutExamples, Divide) {
  EXPECT_EQ(S(logical_divide(L("(4,2,3):(2,1,8)"), L("4:2"))), "((2,2),(2,3)):((4,1),(2,8))");
  Tiler tiler({Tiler(L("3:3")), Tiler(L("(2,4):(1,8)"))});
  Layout a = L("(9,(4,8)):(59,(13,1))");
  Layout ld = logical_divide(a, tiler);
  EXPECT_EQ(S(ld.mode(0).mode(0)), "3:177");
  EXPECT_EQ(ld.shape(), parse_int_tuple("((3,3),((2,4),(2,2)))"));
  Layout zd = zipped_divide(a, tiler);
  EXPECT_EQ(S(zd.mode(0)), "(3,(2,4)):(177,(13,2))");
  EXPECT_EQ(S(zd.mode(0)), S(composition(a, tiler)));
  EXPECT_EQ(product(zd.mode(1).shape()), Extent(12));
  EXPECT_EQ(tiled_divide(a, tiler).rank(), 3);
  EXPECT_EQ(flat_divide(a, tiler).rank(), 4);
}

TEST(LayoutExamples, Product) {
  EXPECT_EQ(S(logical_product(L("(2,2):(4,1)"), L("6:1"))), "((2,2),(2,3)):((4,1),(2,8))");
  // A 2x5 row-major block tiled over a 3x4 column-major grid (CuTe docs' figure). CuTe's current
  // blocked_product zips without coalescing (its docs' picture shows mode 0 coalesced to 6:5,
  // the same function).
  EXPECT_EQ(S(blocked_product(L("(2,5):(5,1)"), L("(3,4):(1,3)"))),
            "((2,3),(5,4)):((5,10),(1,30))");
  EXPECT_EQ(S(raked_product(L("(2,5):(5,1)"), L("(3,4):(1,3)"))), "((3,2),(4,5)):((10,5),(30,1))");
}

// Graphene §3.3, Figure 4: tiling a 4x8 (column-major) tensor with 1-D tile-size tensors per
// dimension. The tiled tensor is (tile, arrangement of tiles) = zipped_divide.
TEST(LayoutExamples, GrapheneTiles) {
  Layout a = L("(4,8):(1,4)");
  // (b) contiguous 2x4 tiles ([2:1],[4:1]): tiles of (2,4):(1,4) arranged (2,2):(2,16).
  EXPECT_EQ(S(zipped_divide(a, Tiler({Tiler(L("2:1")), Tiler(L("4:1"))}))),
            "((2,4),(2,2)):((1,4),(2,16))");
  // (c) every other row ([2:2],[4:1]).
  EXPECT_EQ(S(zipped_divide(a, Tiler({Tiler(L("2:2")), Tiler(L("4:1"))}))),
            "((2,4),(2,2)):((2,4),(1,16))");
  // (d) every other row, and two adjacent columns repeated twice with stride 4
  // ([2:2],[(2,2):(1,4)]).
  EXPECT_EQ(S(zipped_divide(a, Tiler({Tiler(L("2:2")), Tiler(L("(2,2):(1,4)"))}))),
            "((2,(2,2)),(2,2)):((2,(4,16)),(1,8))");
  // Graphene §3.2, Figure 3: the same 4x8 tensor row-major, padded, and with a hierarchical column.
  EXPECT_EQ(L("(4,8):(8,1)")(IntTuple::tuple({1, 2})), 10);
  EXPECT_EQ(L("(4,8):(9,1)").cosize(), 35);  // 3*9 + 7*1 + 1
  Layout c = L("(4,(2,4)):(2,(1,8))");       // two adjacent columns contiguous, then down the rows
  EXPECT_EQ(c(IntTuple::tuple({3, 1})), 7);
  EXPECT_EQ(c(IntTuple::tuple({0, 2})), 8);
  // §3.4 partial tiles: [1023] tiled by 128 over-approximates to 8 tiles.
  EXPECT_EQ(S(logical_divide(L("1023:1"), L("128:1"))), "(128,8):(1,128)");
}

TEST(LayoutExamples, PackedInt4FromHexcute) {
  // Hexcute §2.3: the packed int4 layout of Figure 3 / 5.
  Layout a = L("((2,2,2,4),(8,)):((1,8,128,2),(16,))");
  EXPECT_EQ(S(a), "((2,2,2,4),(8)):((1,8,128,2),(16))");
  EXPECT_EQ(a.size(), 256);
  EXPECT_EQ(a.rank(), 2);
  EXPECT_EQ(a.depth(), 2);
  // A(6): 6 -> natural coordinate ((0,1,1,0),0) -> 8 + 128.
  EXPECT_EQ(a(6), 136);
  EXPECT_EQ(a(IntTuple::tuple({6, 0})), 136);
  EXPECT_EQ(a(parse_int_tuple("((0,1,1,0),0)")), 136);
  // Every offset in [0, 256) exactly once: a permutation.
  std::vector<int> hits(256, 0);
  for (int64 i = 0; i < 256; ++i) hits[a(i)]++;
  for (int h : hits) EXPECT_EQ(h, 1);
}

}  // namespace
}  // namespace tessel::layout
