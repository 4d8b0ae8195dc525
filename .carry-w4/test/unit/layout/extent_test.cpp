// Parametric extents: exact arithmetic and the soundness of divisibility proofs.
#include <gtest/gtest.h>

#include <random>

#include "layout/extent.h"
#include "layout/layout.h"
#include "layout/parse.h"

namespace tessel::layout {
namespace {

Extent random_poly(std::mt19937& rng) {
  std::uniform_int_distribution<int> coef(-5, 5), pick(0, 3), den(1, 4);
  Extent e(coef(rng));
  const char* names[] = {"M", "N", "K"};
  for (int t = pick(rng); t > 0; --t) {
    Extent term(coef(rng));
    int factors = 1 + pick(rng) % 2;
    for (int f = factors; f > 0; --f) term = term * Extent::symbol(names[pick(rng) % 3]);
    e = e + *rational_div(term, Extent(den(rng)));  // symbols are bound to multiples of 24
  }
  return e;
}

TEST(Extent, ArithmeticAgreesWithEvaluation) {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> val(1, 9);
  for (int t = 0; t < 3000; ++t) {
    Extent a = random_poly(rng), b = random_poly(rng);
    // Bind symbols to multiples of 24 so every coefficient denominator divides the result.
    Bindings bind{{"M", 24 * val(rng)}, {"N", 24 * val(rng)}, {"K", 24 * val(rng)}};
    int64 x = a.evaluate(bind), y = b.evaluate(bind);
    ASSERT_EQ((a + b).evaluate(bind), x + y) << a << " + " << b;
    ASSERT_EQ((a - b).evaluate(bind), x - y) << a << " - " << b;
    ASSERT_EQ((a * b).evaluate(bind), x * y) << a << " * " << b;
    ASSERT_EQ((a - a), Extent(0));
    ASSERT_EQ(a + b, b + a);
    ASSERT_EQ(a * b, b * a);
    // Printing and parsing give back the same polynomial.
    ASSERT_EQ(parse_int_tuple(a.str()).value(), a) << a.str();
  }
}

TEST(Extent, ExactDivisionIsSoundUnderFacts) {
  std::mt19937 rng(32);
  std::uniform_int_distribution<int> small(1, 6), den(1, 128);
  Facts facts;
  facts.divisible("M", 64).divisible("N", 8);
  int proved = 0;
  for (int t = 0; t < 3000; ++t) {
    Extent a = Extent(small(rng)) * Extent::symbol(t % 2 ? "M" : "N") * Extent(small(rng));
    if (t % 3 == 0) a = a + Extent::symbol("M") * Extent(small(rng));
    Extent b(den(rng));
    std::optional<Extent> q = exact_div(a, b, facts);
    for (int k = 1; k <= 5; ++k) {
      Bindings bind{{"M", 64 * k}, {"N", 8 * (k + 2)}};
      int64 x = a.evaluate(bind), y = b.evaluate(bind);
      if (q) {
        ASSERT_EQ(q->evaluate(bind) * y, x) << a << " / " << b << " = " << *q;
      }
    }
    if (q) ++proved;
  }
  EXPECT_GT(proved, 150);  // enough provable cases to make the check meaningful
  EXPECT_TRUE(divides(Extent(64), Extent::symbol("M"), facts));
  EXPECT_FALSE(divides(Extent(128), Extent::symbol("M"), facts));
  EXPECT_FALSE(divides(Extent::symbol("M"), Extent(64), facts));
  EXPECT_TRUE(divides(Extent::symbol("M"), Extent::symbol("M") * Extent::symbol("N"), facts));
  EXPECT_EQ(missing_fact(Extent::symbol("M"), Extent(128), facts), "M is divisible by 128");
  EXPECT_EQ(missing_fact(Extent::symbol("K"), Extent(64), facts), "K is divisible by 64");
}

TEST(Extent, OrderProofs) {
  Facts facts;
  facts.divisible("M", 64);
  Extent m = Extent::symbol("M");
  EXPECT_TRUE(provably_le(Extent(64), m, facts));  // 64 | M and M > 0
  EXPECT_TRUE(provably_le(Extent(1), m, facts));
  EXPECT_FALSE(provably_le(Extent(128), m, facts));
  EXPECT_TRUE(provably_le(m, m * Extent(2), facts));
  EXPECT_FALSE(provably_le(m, Extent(1000), facts));
}

TEST(Extent, OverflowIsAUserError) {
  Extent big(int64(1) << 62);
  EXPECT_THROW(big * Extent(4), UserError);
  EXPECT_THROW(big + big, UserError);
  try {
    (void)(big * Extent(4));
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("integer overflow"), std::string::npos);
  }
}

TEST(Extent, ParametricOperationsNameTheMissingFact) {
  Layout a = parse_layout("(M,N):(1,M)");
  Tiler tiler({Tiler(parse_layout("128:1")), Tiler(parse_layout("64:1"))});
  try {
    logical_divide(a, tiler);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("cannot prove that M is divisible by 128"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("logical_divide(M:1, 128:1)"), std::string::npos) << e.message();
  }
  Facts facts;
  facts.divisible("M", 128).divisible("N", 64);
  Layout z = zipped_divide(a, tiler, facts);
  EXPECT_EQ(to_string(z), "((128,64),(M/128,N/64)):((1,M),(128,64*M))");
  // Evaluating a parametric layout asks for values.
  try {
    (void)a(3);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("has parametric extents"), std::string::npos) << e.message();
  }
  EXPECT_EQ(a.bind({{"M", 4}, {"N", 2}})(5), 5);
}

// Parametric complement, product and inverse: compared with the concrete operation after binding.
TEST(Extent, ParametricComplementProductInverse) {
  Facts facts;
  facts.divisible("M", 8);
  Layout rm = parse_layout("(M,N):(N,1)");
  EXPECT_EQ(to_string(complement(parse_layout("M:1"), Extent::symbol("M") * Extent::symbol("N"))),
            "N:M");
  EXPECT_EQ(to_string(logical_product(parse_layout("(4,8)"), Tiler(parse_layout("M:1")), facts)),
            "((4,8),M):((1,4),32)");
  EXPECT_EQ(to_string(right_inverse(rm)), "(N,M):(M,1)");
  EXPECT_EQ(to_string(left_inverse(rm.bind({{"M", 3}, {"N", 5}}))), "(5,3):(3,1)");
  for (int64 m : {8, 16, 24})
    for (int64 n : {1, 3, 4}) {
      Bindings b{{"M", m}, {"N", n}};
      Layout inv = right_inverse(rm).bind(b), con = rm.bind(b);
      for (int64 i = 0; i < m * n; ++i) ASSERT_EQ(con(inv(i)), i);
      Layout sym_div = logical_divide(rm, Tiler(parse_layout("(2,4):(4,1)")), facts).bind(b);
      Layout con_div = logical_divide(con, Tiler(parse_layout("(2,4):(4,1)")));
      ASSERT_EQ(sym_div.size(), con_div.size());
      for (int64 i = 0; i < con_div.size(); ++i) ASSERT_EQ(sym_div(i), con_div(i));
    }
}

}  // namespace
}  // namespace tessel::layout
