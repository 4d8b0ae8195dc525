// Integer tuples: structure, colexicographic order, and the errors of bad layouts.
#include <gtest/gtest.h>

#include "layout/int_tuple.h"
#include "layout/layout.h"
#include "layout/parse.h"
#include "random_layouts.h"

namespace tessel::layout {
namespace {

IntTuple T(const char* s) {
  return parse_int_tuple(s);
}

TEST(IntTuple, Structure) {
  IntTuple t = T("(4,(2,3))");
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(product(t), Extent(24));
  EXPECT_EQ(flatten(t), T("(4,2,3)"));
  EXPECT_EQ(T("8").rank(), 1);
  EXPECT_EQ(T("8").depth(), 0);
  EXPECT_EQ(T("(8,)"), T("(8)"));
  EXPECT_NE(T("(8)"), T("8"));
  EXPECT_TRUE(congruent(T("(4,(2,3))"), T("(1,(9,9))")));
  EXPECT_FALSE(congruent(T("(4,(2,3))"), T("(1,9)")));
  EXPECT_TRUE(compatible(T("(4,6)"), T("(4,(2,3))")));
  EXPECT_TRUE(compatible(T("24"), T("(4,(2,3))")));
  EXPECT_FALSE(compatible(T("(4,(2,3))"), T("(4,6)")));
  EXPECT_EQ(compact_col_major(T("(4,(2,3))")), T("(1,(4,8))"));
  EXPECT_EQ(compact_row_major(T("(4,(2,3))")), T("(6,(3,1))"));
}

TEST(IntTuple, ColexRoundTrip) {
  testing::LayoutGen g(41);
  for (int t = 0; t < 500; ++t) {
    IntTuple s = g.shape(g.uniform(1, 5), 5, 3);
    int64 n = product(s).constant();
    for (int64 i = 0; i < n; ++i) {
      IntTuple c = idx2crd(i, s);
      ASSERT_TRUE(congruent(c, s));
      ASSERT_EQ(crd2idx(c, s), i);
    }
    // Leftmost mode fastest.
    if (s.is_tuple() && n > 1) {
      std::vector<Extent> ls = leaves(s);
      if (ls[0].constant() > 1) {
        ASSERT_EQ(leaves(idx2crd(1, s))[0], Extent(1));
      }
    }
  }
}

TEST(IntTuple, BadLayoutsAreUserErrors) {
  auto message = [](const char* text) -> std::string {
    try {
      parse_layout(text);
    } catch (const UserError& e) {
      return std::to_string(e.location().column) + ": " + e.message();
    }
    return "no error";
  };
  EXPECT_EQ(message("(4,2):(1,(2,3))"),
            "7: the stride (1,(2,3)) is not congruent to the shape (4,2)");
  EXPECT_EQ(message("(4,0):(1,4)"),
            "1: layout shape (4,0) has the extent 0; shape extents must be positive");
  EXPECT_EQ(message("(4,2"), "5: expected ',' or ')' in a tuple, found the end of the expression");
  EXPECT_EQ(message("(4,2):(1,4) x"), "13: unexpected 'x' after the layout");
  EXPECT_EQ(message("(4,$)"), "4: unexpected character '$'");
  EXPECT_EQ(message("()"), "2: empty tuple");
  EXPECT_EQ(message("99999999999999999999"), "1: the integer starting here is too large");
  try {
    parse_layout("(4,2):(1,4)")(IntTuple::tuple({4, 0}));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "coordinate 4 is out of range for the shape 4 (size 4)");
  }
}

TEST(IntTuple, AlgebraErrorsNameOperationAndOperands) {
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const UserError& e) {
      return e.message();
    }
    return "no error";
  };
  EXPECT_EQ(
      message([] { composition(parse_layout("(6,2):(8,2)"), parse_layout("4:4")); }),
      "composition((6,2):(8,2), 4:4) is not defined: the stride divisibility condition fails: "
      "the remaining stride 4 of 4:4 neither divides nor is a multiple of the extent 6 of mode 0 "
      "of coalesce(A) = (6,2):(8,2)");
  EXPECT_EQ(
      message([] { composition(parse_layout("(4,3):(1,10)"), parse_layout("6:1")); }),
      "composition((4,3):(1,10), 6:1) is not defined: the shape divisibility condition fails: "
      "the remaining extent 6 of 6:1 is not a multiple of 4 (what is left of mode 0 of "
      "coalesce(A) = (4,3):(1,10))");
  // Found by the property fuzz (TESSEL_LAYOUT_TRIALS=100000): B's modes interleave, so the
  // mode-wise composition (what CuTe returns) is not A o B; tessel refuses it.
  EXPECT_EQ(
      message([] {
        composition(parse_layout("(6,(4,6)):(432,(2,24))"), parse_layout("((1,3),4):((2,2),3)"));
      }),
      "composition((6,(4,6)):(432,(2,24)), ((1,3),4):((2,2),3)) is not defined: the modes of B "
      "interleave or overlap (stride 3 is not a multiple of 6, the extent of the modes below "
      "it), and the mode-wise result ((1,3),(2,2)):((0,864),(1296,2)) gives 3024 at index 5 "
      "where A(B(5)) = 434; A o B is not a layout of B's shape");
  // Interleaved B modes are fine when A is additive over them (here A is one mode).
  EXPECT_EQ(to_string(composition(parse_layout("(6,4):(1,6)"), parse_layout("(3,4):(2,3)"))),
            "(3,4):(2,3)");
  EXPECT_EQ(message([] { complement(parse_layout("(4,2):(1,1)"), 16); }),
            "complement((4,2):(1,1), 16): the layout (4,2):(1,1) is not injective");
  EXPECT_EQ(
      message([] { complement(parse_layout("(3,2):(2,3)"), 16); }),
      "complement((3,2):(2,3), 16): the layout's modes interleave (stride 3 is not a multiple "
      "of 6, the extent of the modes below it), so its complement is not a layout");
  EXPECT_EQ(message([] { left_inverse(parse_layout("(4,2):(1,0)")); }),
            "left_inverse((4,2):(1,0)): the layout is not injective");
  EXPECT_EQ(message([] { complement(parse_layout("4:-1"), 16); }),
            "complement(4:-1, 16): the stride -1 is not positive");
  EXPECT_EQ(message([] { coalesce(parse_layout("(4,2)"), parse_int_tuple("(1,1,1)")); }),
            "coalesce((4,2):(1,4), (1,1,1)): the profile has 3 modes but the layout only 2");
  EXPECT_EQ(
      message([] {
        logical_divide(parse_layout("(4,2)"),
                       Tiler({Tiler(parse_layout("2:1")), Tiler(parse_layout("2:1")),
                              Tiler(parse_layout("2:1"))}));
      }),
      "logical_divide((4,2):(1,4), <2:1,2:1,2:1>): the tiler has 3 modes but the layout only 2");
}

}  // namespace
}  // namespace tessel::layout
