// Every algebra operation's contract, checked by brute-force evaluation on many generated layouts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "layout/layout.h"
#include "layout/parse.h"
#include "random_layouts.h"

namespace tessel::layout {
namespace {

using testing::injective_bf;
using testing::LayoutGen;
using testing::offsets;

// Trials per property: 2000 by default (a few seconds for the whole suite); set
// TESSEL_LAYOUT_TRIALS to run the same properties much longer (a property fuzz).
const int kTrials = [] {
  const char* env = std::getenv("TESSEL_LAYOUT_TRIALS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 2000;
}();

// A evaluated at x, past its size extended by the last mode of coalesce(A) (the composition
// contract's reading of an index beyond the domain).
int64 ext(const Layout& a, int64 x) {
  return x < a.size() ? a(x) : coalesce(a)(x);
}

bool no_mergeable_modes(const Layout& r) {
  Layout f = flatten(r);
  for (int i = 0; i + 1 < f.rank(); ++i) {
    const Extent s = f.shape()[i].value(), d = f.stride()[i].value();
    if (f.stride()[i + 1].value() == s * d) return false;
  }
  for (const Extent& s : leaves(f.shape())) {
    if (s == Extent(1) && f.size() != 1) return false;
  }
  return true;
}

TEST(LayoutContract, Coalesce) {
  LayoutGen g(1);
  for (int t = 0; t < kTrials; ++t) {
    Layout l =
        g.coin() ? g.arbitrary(g.uniform(1, 6), 4, 12) : g.complementable(g.uniform(1, 6), 4, 2);
    Layout r = coalesce(l);
    SCOPED_TRACE(l.str() + " -> " + r.str());
    ASSERT_EQ(r.size(), l.size());
    ASSERT_LE(r.depth(), 1);
    ASSERT_TRUE(no_mergeable_modes(r));
    for (int64 i = 0; i < l.size(); ++i) ASSERT_EQ(r(i), l(i)) << "at " << i;
  }
}

TEST(LayoutContract, CoalesceByMode) {
  LayoutGen g(2);
  for (int t = 0; t < kTrials; ++t) {
    std::vector<Layout> modes;
    int r = g.uniform(1, 3);
    for (int i = 0; i < r; ++i) modes.push_back(g.arbitrary(g.uniform(1, 3), 4, 10));
    Layout l = make_layout(modes);
    IntTuple profile = IntTuple(std::vector<IntTuple>(r, IntTuple(1)));
    Layout c = coalesce(l, profile);
    SCOPED_TRACE(l.str() + " -> " + c.str());
    ASSERT_EQ(c.rank(), r);
    for (int i = 0; i < r; ++i) {
      ASSERT_EQ(c.mode(i).size(), l.mode(i).size());
      ASSERT_EQ(c.mode(i), coalesce(l.mode(i)));
    }
    for (int64 i = 0; i < l.size(); ++i) ASSERT_EQ(c(i), l(i));
  }
}

TEST(LayoutContract, Composition) {
  LayoutGen g(3);
  int defined = 0;
  for (int t = 0; t < 4 * kTrials; ++t) {
    Layout a =
        g.coin() ? g.complementable(g.uniform(1, 4), 6, 3) : g.arbitrary(g.uniform(1, 4), 6, 20);
    // B: often a layout whose strides divide into A's modes (the useful case), sometimes random.
    Layout b =
        g.coin(0.7) ? g.complementable(g.uniform(1, 3), 6, 2) : g.arbitrary(g.uniform(1, 3), 6, 8);
    Layout r;
    try {
      r = composition(a, b);
    } catch (const UserError& e) {
      ASSERT_NE(e.message().find("composition("), std::string::npos) << e.message();
      continue;
    }
    ++defined;
    SCOPED_TRACE(a.str() + " o " + b.str() + " = " + r.str());
    ASSERT_TRUE(compatible(b.shape(), r.shape()));
    for (int64 i = 0; i < b.size(); ++i) ASSERT_EQ(r(i), ext(a, b(i))) << "at " << i;
  }
  EXPECT_GT(defined, kTrials);  // most generated pairs are composable
}

TEST(LayoutContract, CompositionByMode) {
  LayoutGen g(4);
  int defined = 0;
  for (int t = 0; t < kTrials; ++t) {
    Layout a = make_layout(
        {g.complementable(g.uniform(1, 2), 6, 2), g.complementable(g.uniform(1, 2), 6, 2)});
    Tiler tiler({Tiler(g.complementable(1, 4, 2)), Tiler(g.complementable(g.uniform(1, 2), 3, 2))});
    Layout r;
    try {
      r = composition(a, tiler);
    } catch (const UserError&) {
      continue;
    }
    ++defined;
    SCOPED_TRACE(a.str() + " o " + tiler.str() + " = " + r.str());
    for (int i = 0; i < 2; ++i) {
      Layout ai = a.mode(i), bi = tiler.modes()[i].layout(), ri = r.mode(i);
      for (int64 k = 0; k < bi.size(); ++k) ASSERT_EQ(ri(k), ext(ai, bi(k)));
    }
  }
  EXPECT_GT(defined, kTrials / 2);
}

// Nested by-mode tilers recurse into nested modes: <T0,<T1,T2>> applies T1 and T2 to the two
// sub-modes of mode 1.
TEST(LayoutContract, NestedTilers) {
  LayoutGen g(17);
  int defined = 0;
  for (int t = 0; t < kTrials / 4; ++t) {
    Layout a0 = g.permutation(g.uniform(1, 2), 6), a1 = g.permutation(1, 6),
           a2 = g.permutation(1, 6);
    Layout a = make_layout({a0, make_layout({a1, a2})});
    Layout t0 = g.complementable(1, 3, 2), t1 = g.complementable(1, 3, 2),
           t2 = g.complementable(1, 3, 2);
    Tiler tiler({Tiler(t0), Tiler({Tiler(t1), Tiler(t2)})});
    Layout c, d;
    try {
      c = composition(a, tiler);
      d = logical_divide(a, tiler);
    } catch (const UserError&) {
      continue;
    }
    ++defined;
    SCOPED_TRACE(a.str() + " by " + tiler.str() + ": " + c.str() + ", " + d.str());
    std::vector<std::pair<Layout, Layout>> parts = {{a0, t0}, {a1, t1}, {a2, t2}};
    std::vector<Layout> cs = {c.mode(0), c.mode(1).mode(0), c.mode(1).mode(1)};
    std::vector<Layout> ds = {d.mode(0), d.mode(1).mode(0), d.mode(1).mode(1)};
    for (int k = 0; k < 3; ++k) {
      const auto& [ak, tk] = parts[k];
      for (int64 i = 0; i < tk.size(); ++i) ASSERT_EQ(cs[k](i), ext(ak, tk(i)));
      ASSERT_EQ(ds[k], logical_divide(ak, tk));
    }
    // The nested zipped_divide gathers the tile parts and the rest parts in the same nesting.
    Layout z = zipped_divide(a, tiler);
    ASSERT_EQ(z.mode(0).mode(1).mode(1), ds[2].mode(0));
    ASSERT_EQ(z.mode(1).mode(1).mode(0), ds[1].mode(1));
  }
  EXPECT_GT(defined, kTrials / 8);
}

TEST(LayoutContract, Complement) {
  LayoutGen g(5);
  for (int t = 0; t < kTrials; ++t) {
    Layout a = g.complementable(g.uniform(1, 4), 5, 3);
    if (g.coin(0.3))
      a = make_layout({a, Layout(IntTuple(g.uniform(1, 3)), IntTuple(0))});  // broadcast
    int64 m = g.coin() ? a.cosize() * g.uniform(1, 4) : g.uniform(1, 2 * a.cosize());
    Layout r = complement(a, m);
    SCOPED_TRACE("complement(" + a.str() + ", " + std::to_string(m) + ") = " + r.str());
    // Ordered: strictly increasing offsets.
    for (int64 i = 1; i < r.size(); ++i) ASSERT_LT(r(i - 1), r(i));
    // Disjoint from A except at 0.
    std::vector<int64> ao = offsets(a);
    std::set<int64> image(ao.begin(), ao.end());
    for (int64 i = 1; i < r.size(); ++i) ASSERT_EQ(image.count(r(i)), 0u) << "R(" << i << ")";
    // (A, R) covers the cotarget without repeating (up to A's own broadcast modes).
    Layout ar = make_layout({filter(a), r});
    ASSERT_TRUE(injective_bf(ar));
    ASSERT_GE(ar.cosize(), m);
    // For a compact A (a bijection onto [0, cosize)) and a cotarget that is a multiple of its
    // cosize, (A, R) is a bijection onto [0, cotarget).
    Layout fa = filter(a);
    if (fa.cosize() == fa.size() && m % fa.cosize() == 0) {
      ASSERT_EQ(ar.size(), m);
      ASSERT_EQ(ar.cosize(), m);
    }
  }
}

TEST(LayoutContract, Filter) {
  LayoutGen g(16);
  for (int t = 0; t < kTrials; ++t) {
    Layout l = g.complementable(g.uniform(1, 4), 4, 3);
    // Sprinkle broadcast (stride-0) modes in.
    std::vector<Layout> modes = l.modes();
    modes.insert(modes.begin() + g.uniform(0, static_cast<int>(modes.size())),
                 Layout(IntTuple(g.uniform(1, 3)), IntTuple(0)));
    Layout b = make_layout(modes);
    Layout f = filter(b);
    SCOPED_TRACE("filter(" + b.str() + ") = " + f.str());
    // The distinct offsets of b, in the same order, each once.
    std::vector<int64> seen;
    for (int64 i = 0; i < b.size(); ++i) {
      if (std::find(seen.begin(), seen.end(), b(i)) == seen.end()) seen.push_back(b(i));
    }
    ASSERT_EQ(offsets(f), seen);
    ASSERT_EQ(complement(b, 64), complement(f, 64));
  }
}

TEST(LayoutContract, RightInverse) {
  LayoutGen g(6);
  for (int t = 0; t < kTrials; ++t) {
    Layout l = g.coin() ? g.permutation(g.uniform(1, 5), 5) : g.arbitrary(g.uniform(1, 4), 5, 12);
    Layout r = right_inverse(l);
    SCOPED_TRACE("right_inverse(" + l.str() + ") = " + r.str());
    for (int64 i = 0; i < r.size(); ++i) ASSERT_EQ(l(r(i)), i) << "at " << i;
    // Maximal for bijections: a permutation of [0, size) inverts fully.
    if (injective_bf(l) && l.cosize() == l.size()) {
      ASSERT_EQ(r.size(), l.size());
    }
  }
}

TEST(LayoutContract, LeftInverse) {
  LayoutGen g(7);
  for (int t = 0; t < kTrials; ++t) {
    Layout l = g.complementable(g.uniform(1, 5), 5, 3);
    Layout r = left_inverse(l);
    SCOPED_TRACE("left_inverse(" + l.str() + ") = " + r.str());
    for (int64 i = 0; i < l.size(); ++i) ASSERT_EQ(r(l(i)), i) << "at " << i;
  }
}

TEST(LayoutContract, LogicalDivide) {
  LayoutGen g(8);
  int defined = 0;
  for (int t = 0; t < kTrials; ++t) {
    Layout a =
        g.coin() ? g.permutation(g.uniform(1, 4), 6) : g.complementable(g.uniform(1, 4), 6, 2);
    Layout b = g.complementable(g.uniform(1, 2), 4, 2);
    Layout r;
    try {
      r = logical_divide(a, b);
    } catch (const UserError&) {
      continue;
    }
    ++defined;
    SCOPED_TRACE("logical_divide(" + a.str() + ", " + b.str() + ") = " + r.str());
    Layout bb = make_layout({b, complement(b, a.size())});
    ASSERT_EQ(r.rank(), 2);
    ASSERT_EQ(r.mode(0), composition(a, b));
    for (int64 i = 0; i < bb.size(); ++i) ASSERT_EQ(r(i), ext(a, bb(i)));
    // When the tile's hull divides A, the divide only reorders A's offsets.
    if (a.size() % bb.cosize() == 0 && b.cosize() <= a.size()) {
      std::vector<int64> x = offsets(r), y = offsets(a);
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      ASSERT_EQ(x, y);
    }
  }
  EXPECT_GT(defined, kTrials / 2);
}

// zipped / tiled / flat divides are logical_divide with modes regrouped: check by coordinates.
TEST(LayoutContract, ZippedTiledFlatDivide) {
  LayoutGen g(9);
  int defined = 0;
  for (int t = 0; t < kTrials; ++t) {
    Layout a = make_layout({g.permutation(g.uniform(1, 2), 6), g.permutation(g.uniform(1, 2), 6),
                            g.permutation(1, 3)});
    Tiler tiler({Tiler(g.complementable(1, 3, 2)), Tiler(g.complementable(1, 3, 2))});
    Layout ld, zd, td, fd;
    try {
      ld = logical_divide(a, tiler);
      zd = zipped_divide(a, tiler);
      td = tiled_divide(a, tiler);
      fd = flat_divide(a, tiler);
    } catch (const UserError&) {
      continue;
    }
    ++defined;
    SCOPED_TRACE("A = " + a.str() + ", tiler " + tiler.str() + ": ld " + ld.str() + ", zd " +
                 zd.str());
    Layout c = composition(a, tiler);
    ASSERT_EQ(zd.mode(0), make_layout({c.mode(0), c.mode(1)}));
    ASSERT_EQ(td.rank(), 4);
    ASSERT_EQ(fd.rank(), 5);
    int64 t0n = ld.mode(0).mode(0).size(), t1n = ld.mode(1).mode(0).size();
    int64 r0n = ld.mode(0).mode(1).size(), r1n = ld.mode(1).mode(1).size();
    int64 en = a.mode(2).size();
    for (int64 t0 = 0; t0 < t0n; ++t0)
      for (int64 t1 = 0; t1 < t1n; ++t1)
        for (int64 r0 = 0; r0 < r0n; ++r0)
          for (int64 r1 = 0; r1 < r1n; ++r1)
            for (int64 e = 0; e < en; ++e) {
              using T = IntTuple;
              int64 want = ld(T::tuple({T::tuple({t0, r0}), T::tuple({t1, r1}), e}));
              ASSERT_EQ(zd(T::tuple({T::tuple({t0, t1}), T::tuple({r0, r1, e})})), want);
              ASSERT_EQ(td(T::tuple({T::tuple({t0, t1}), r0, r1, e})), want);
              ASSERT_EQ(fd(T::tuple({t0, t1, r0, r1, e})), want);
            }
  }
  EXPECT_GT(defined, kTrials / 2);
}

TEST(LayoutContract, LogicalProduct) {
  LayoutGen g(10);
  for (int t = 0; t < kTrials; ++t) {
    Layout a = g.complementable(g.uniform(1, 3), 4, 2);
    Layout b =
        g.coin() ? g.permutation(g.uniform(1, 3), 4) : g.complementable(g.uniform(1, 2), 4, 2);
    Layout r;
    try {
      r = logical_product(a, b);
    } catch (const UserError&) {
      continue;  // the complement composed with B may violate divisibility
    }
    SCOPED_TRACE("logical_product(" + a.str() + ", " + b.str() + ") = " + r.str());
    ASSERT_EQ(r.mode(0), a);
    ASSERT_TRUE(compatible(b.shape(), r.mode(1).shape()));
    Layout rest = complement(a, a.size() * b.cosize());
    for (int64 j = 0; j < b.size(); ++j) {
      for (int64 i = 0; i < a.size(); ++i) ASSERT_EQ(r(i + a.size() * j), a(i) + rest(b(j)));
    }
    ASSERT_TRUE(injective_bf(r));
  }
}

// zipped / tiled / flat products regroup a by-mode logical_product: check by coordinates.
TEST(LayoutContract, ZippedTiledFlatProduct) {
  LayoutGen g(18);
  int defined = 0;
  for (int t = 0; t < kTrials / 2; ++t) {
    Layout a = make_layout({g.permutation(1, 4), g.permutation(1, 4), g.permutation(1, 3)});
    Tiler tiler({Tiler(g.permutation(1, 3)), Tiler(g.complementable(1, 3, 2))});
    Layout lp, zp, tp, fp;
    try {
      lp = logical_product(a, tiler);
      zp = zipped_product(a, tiler);
      tp = tiled_product(a, tiler);
      fp = flat_product(a, tiler);
    } catch (const UserError&) {
      continue;
    }
    ++defined;
    SCOPED_TRACE("A = " + a.str() + ", tiler " + tiler.str() + ": lp " + lp.str() + ", zp " +
                 zp.str());
    ASSERT_EQ(tp.rank(), 4);
    ASSERT_EQ(fp.rank(), 5);
    int64 b0n = lp.mode(0).mode(0).size(), b1n = lp.mode(1).mode(0).size();
    int64 t0n = lp.mode(0).mode(1).size(), t1n = lp.mode(1).mode(1).size(), en = a.mode(2).size();
    for (int64 b0 = 0; b0 < b0n; ++b0)
      for (int64 b1 = 0; b1 < b1n; ++b1)
        for (int64 t0 = 0; t0 < t0n; ++t0)
          for (int64 t1 = 0; t1 < t1n; ++t1)
            for (int64 e = 0; e < en; ++e) {
              using T = IntTuple;
              int64 want = lp(T::tuple({T::tuple({b0, t0}), T::tuple({b1, t1}), e}));
              ASSERT_EQ(zp(T::tuple({T::tuple({b0, b1}), T::tuple({t0, t1, e})})), want);
              ASSERT_EQ(tp(T::tuple({T::tuple({b0, b1}), t0, t1, e})), want);
              ASSERT_EQ(fp(T::tuple({b0, b1, t0, t1, e})), want);
            }
  }
  EXPECT_GT(defined, kTrials / 4);
}

TEST(LayoutContract, BlockedAndRakedProduct) {
  LayoutGen g(11);
  for (int t = 0; t < kTrials; ++t) {
    IntTuple as = IntTuple::tuple({g.uniform(1, 4), g.uniform(1, 4)});
    Layout a = g.coin() ? Layout(as, compact_row_major(as)) : Layout(as);
    Layout b = make_layout({Layout(IntTuple(g.uniform(1, 4))), Layout(IntTuple(g.uniform(1, 4)))});
    b = g.coin() ? Layout(b.shape(), compact_row_major(b.shape())) : b;
    Layout bl = blocked_product(a, b), rk = raked_product(a, b);
    SCOPED_TRACE(a.str() + " x " + b.str() + ": blocked " + bl.str() + ", raked " + rk.str());
    Layout rest = composition(complement(a, a.size() * b.cosize()), b);
    int64 a0 = a.mode(0).size(), a1 = a.mode(1).size(), b0 = b.mode(0).size(),
          b1 = b.mode(1).size();
    ASSERT_EQ(bl.mode(0).size(), a0 * b0);
    ASSERT_EQ(rk.mode(1).size(), a1 * b1);
    for (int64 i0 = 0; i0 < a0; ++i0)
      for (int64 i1 = 0; i1 < a1; ++i1)
        for (int64 j0 = 0; j0 < b0; ++j0)
          for (int64 j1 = 0; j1 < b1; ++j1) {
            using T = IntTuple;
            int64 want = a(T::tuple({i0, i1})) + rest(T::tuple({j0, j1}));
            ASSERT_EQ(bl(T::tuple({i0 + a0 * j0, i1 + a1 * j1})), want);
            ASSERT_EQ(rk(T::tuple({j0 + b0 * i0, j1 + b1 * i1})), want);
          }
  }
}

TEST(LayoutContract, MaxCommonVector) {
  LayoutGen g(12);
  for (int t = 0; t < kTrials; ++t) {
    // Two layouts over the same shape, e.g. a register fragment and a memory tile.
    IntTuple s = g.shape(g.uniform(1, 4), 4);
    auto with_order = [&]() {
      std::vector<Extent> ls = leaves(s);
      std::vector<size_t> order(ls.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      if (g.coin(0.7)) std::shuffle(order.begin(), order.end(), g.rng());
      std::vector<int64> d(ls.size());
      int64 cur = 1;
      for (size_t i : order) {
        d[i] = cur;
        cur *= ls[i].constant();
      }
      size_t k = 0;
      return Layout(s, LayoutGen::like(s, d, k));
    };
    Layout a = with_order(), b = with_order();
    Layout c = max_common_layout(a, b);
    int64 n = max_common_vector(a, b);
    SCOPED_TRACE("max_common_layout(" + a.str() + ", " + b.str() + ") = " + c.str());
    ASSERT_EQ(n, c.size());
    for (int64 i = 0; i < n; ++i) {
      ASSERT_EQ(a(c(i)), i);
      ASSERT_EQ(b(c(i)), i);
    }
    // Maximal: the next element along b's inverse is not contiguous in a.
    Layout inv_b = right_inverse(b);
    int64 m = 0;
    while (m < inv_b.size() && a(inv_b(m)) == m) ++m;
    ASSERT_EQ(n, std::max<int64>(m, 1));
  }
}

TEST(LayoutContract, EvaluationForms) {
  LayoutGen g(13);
  for (int t = 0; t < kTrials; ++t) {
    Layout l = g.arbitrary(g.uniform(1, 5), 4, 9);
    for (int64 i = 0; i < l.size(); ++i) {
      IntTuple natural = idx2crd(i, l.shape());
      ASSERT_EQ(crd2idx(natural, l.shape()), i);
      ASSERT_EQ(l(natural), l(i));
      // Hierarchical: 1-D within each top-level mode.
      if (l.shape().is_tuple()) {
        std::vector<IntTuple> h;
        for (int k = 0; k < l.rank(); ++k) h.emplace_back(crd2idx(natural[k], l.shape()[k]));
        ASSERT_EQ(l(IntTuple(h)), l(i));
      }
      ASSERT_EQ(l(i), inner_product(natural, l.stride()).constant());
    }
  }
}

TEST(LayoutContract, ParsePrintRoundTrip) {
  LayoutGen g(14);
  for (int t = 0; t < kTrials; ++t) {
    Layout l = g.arbitrary(g.uniform(1, 6), 9, 99);
    ASSERT_EQ(parse_layout(to_string(l)), l) << to_string(l);
  }
}

// Parametric extents: an operation on a symbolic layout, then bound, equals the operation on the
// bound layout (soundness of the proofs), whenever the facts hold for the bound values.
TEST(LayoutContract, ParametricAgreesWithConcrete) {
  LayoutGen g(15);
  Facts facts;
  facts.divisible("M", 16).divisible("N", 8);
  Layout a = parse_layout("(M,N):(1,M)");
  Layout ar = parse_layout("(M,N):(N,1)");
  for (int t = 0; t < 300; ++t) {
    int tm = 1 << g.uniform(0, 4), tn = 1 << g.uniform(0, 3);
    Tiler tiler({Tiler(Layout(IntTuple(tm))), Tiler(Layout(IntTuple(tn)))});
    Bindings bind{{"M", 16 * g.uniform(1, 3)}, {"N", 8 * g.uniform(1, 3)}};
    for (const Layout& base : {a, ar}) {
      Layout sym_zd = zipped_divide(base, tiler, facts);
      Layout con_zd = zipped_divide(base.bind(bind), tiler);
      SCOPED_TRACE(sym_zd.str() + " vs " + con_zd.str());
      Layout bound = sym_zd.bind(bind);
      ASSERT_EQ(bound.size(), con_zd.size());
      for (int64 i = 0; i < con_zd.size(); ++i) ASSERT_EQ(bound(i), con_zd(i));
      Layout sym_c = composition(base, tiler, facts).bind(bind);
      Layout con_c = composition(base.bind(bind), tiler);
      for (int64 i = 0; i < con_c.size(); ++i) ASSERT_EQ(sym_c(i), con_c(i));
    }
  }
}

}  // namespace
}  // namespace tessel::layout
