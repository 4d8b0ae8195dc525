// Swizzles, composed layouts and thread-value layouts, including the instruction layouts of the
// papers (mma.sync, ldmatrix, wgmma) checked against their PTX / HOPPER.md formulas.
#include <gtest/gtest.h>

#include "layout/parse.h"
#include "layout/swizzle.h"
#include "layout/tv_layout.h"
#include "random_layouts.h"

namespace tessel::layout {
namespace {

TEST(Swizzle, MatchesBitFormulaAndIsAnInvolution) {
  for (int b = 0; b <= 3; ++b)
    for (int m = 0; m <= 4; ++m)
      for (int s = b; s <= b + 3; ++s) {
        Swizzle sw(b, m, s);
        int64 range = int64(1) << (b + m + s + 1);
        std::vector<int> hits(range, 0);
        for (int64 x = 0; x < range; ++x) {
          int64 y = sw(x);
          // Bits [m, m+b) are XORed with bits [m+s, m+s+b); everything else is kept.
          int64 want = x ^ (((x >> (m + s)) & ((int64(1) << b) - 1)) << m);
          ASSERT_EQ(y, want) << sw.str() << " at " << x;
          ASSERT_EQ(sw(y), x);
          hits[y]++;
        }
        for (int h : hits) ASSERT_EQ(h, 1);
      }
}

TEST(Swizzle, HopperPatterns) {
  // HOPPER.md §3: 128B swizzle XORs the 16-byte chunk index with row % 8 (byte addresses).
  Swizzle sw128(3, 4, 3), sw64(2, 4, 3), sw32(1, 4, 3);
  for (int64 a = 0; a < 4096; ++a) {
    EXPECT_EQ(sw128(a), a ^ (((a >> 7) & 7) << 4));
    EXPECT_EQ(sw64(a), a ^ (((a >> 7) & 3) << 4));
    EXPECT_EQ(sw32(a), a ^ (((a >> 7) & 1) << 4));
  }
  EXPECT_EQ(sw128.str(), "Sw<3,4,3>");
}

TEST(Swizzle, InvalidParametersAreUserErrors) {
  try {
    Swizzle(3, 4, 2);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("Swizzle<3,4,2> is not valid"), std::string::npos) << e.message();
  }
}

TEST(ComposedLayout, EvaluatesSwizzleAfterLayout) {
  testing::LayoutGen g(21);
  for (int t = 0; t < 300; ++t) {
    Layout l = g.permutation(g.uniform(1, 4), 8);
    Swizzle sw(g.uniform(0, 2), g.uniform(0, 2), 3);
    ComposedLayout c = composition(sw, l);
    for (int64 i = 0; i < l.size(); ++i) ASSERT_EQ(c(i), sw(l(i)));
    // Composing further keeps the swizzle outermost: (Sw o L) o B = Sw o (L o B).
    // B: l's index space read as a (d, size/d) row-major matrix (a transpose).
    int64 d = g.uniform(1, 4);
    if (l.size() % d != 0) continue;
    Layout b(IntTuple::tuple({d, l.size() / d}), IntTuple::tuple({l.size() / d, 1}));
    ComposedLayout cb = c;
    try {
      cb = composition(c, b);
    } catch (const UserError&) {
      continue;
    }
    for (int64 i = 0; i < b.size(); ++i) ASSERT_EQ(cb(i), c(b(i)));
  }
  // A 128B-swizzled 8x64 f16 tile (row-major, element offsets, M=3 for 16-byte chunks).
  ComposedLayout tile = composition(Swizzle(3, 3, 3), parse_layout("(8,64):(64,1)"));
  EXPECT_EQ(tile.str(), "Sw<3,3,3> o 0 o (8,64):(64,1)");
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 64; ++c) {
      int chunk = c / 8, within = c % 8;
      EXPECT_EQ(tile(IntTuple::tuple({r, c})), r * 64 + ((chunk ^ r) * 8) + within);
    }
}

// mma.sync.m16n8k16 (f16 inputs, f32 accumulators), PTX ISA "Matrix fragments for mma.m16n8k16":
// groupID = lane / 4, threadID_in_group = lane % 4.
TEST(TVLayout, MmaM16n8k16Accumulator) {
  TVLayout c(parse_layout("((4,8),(2,2)):((32,1),(16,8))"), parse_int_tuple("(16,8)"));
  for (int64 lane = 0; lane < 32; ++lane)
    for (int64 i = 0; i < 4; ++i) {
      int64 row = lane / 4 + 8 * (i >= 2), col = (lane % 4) * 2 + (i & 1);
      ASSERT_EQ(c.coord(lane, i), IntTuple::tuple({row, col})) << lane << "," << i;
    }
  Layout inv = c.inverse();
  for (int64 m = 0; m < 16; ++m)
    for (int64 n = 0; n < 8; ++n) {
      int64 tv = inv(IntTuple::tuple({m, n}));
      ASSERT_EQ(c.index(tv % 32, tv / 32), m + 16 * n);
    }
}

TEST(TVLayout, MmaM16n8k16OperandA) {
  TVLayout a(parse_layout("((4,8),(2,2,2)):((32,1),(16,8,128))"), parse_int_tuple("(16,16)"));
  for (int64 lane = 0; lane < 32; ++lane)
    for (int64 i = 0; i < 8; ++i) {
      int64 row = lane / 4 + 8 * ((i >> 1) & 1);
      int64 col = (lane % 4) * 2 + (i & 1) + 8 * (i >> 2);
      ASSERT_EQ(a.coord(lane, i), IntTuple::tuple({row, col}));
    }
}

// ldmatrix.sync.aligned.m8n8.x4.b16 (not transposed): thread t supplies the address of row t % 8
// of matrix t / 8; afterwards register j of thread t holds elements (t/4, 2*(t%4) + {0,1}) of
// matrix j. With the four 8x8 matrices arranged as the 16x16 A tile of mma.m16n8k16
// (matrix j at rows 8*(j%2), cols 8*(j/2)), the destination TV layout is exactly mma's A layout:
// that is why ldmatrix.x4 feeds mma without shuffles.
TEST(TVLayout, LdmatrixX4) {
  TVLayout src(parse_layout("((8,2,2),8):((1,8,128),16)"), parse_int_tuple("(16,16)"));
  TVLayout dst(parse_layout("((4,8),(2,2,2)):((32,1),(16,8,128))"), parse_int_tuple("(16,16)"));
  for (int64 t = 0; t < 32; ++t) {
    int64 j = t / 8;
    for (int64 v = 0; v < 8; ++v) {
      ASSERT_EQ(src.coord(t, v), IntTuple::tuple({t % 8 + 8 * (j % 2), 8 * (j / 2) + v}));
    }
    for (int64 reg = 0; reg < 4; ++reg)
      for (int64 e = 0; e < 2; ++e) {
        int64 row = t / 4 + 8 * (reg % 2), col = 2 * (t % 4) + e + 8 * (reg / 2);
        ASSERT_EQ(dst.coord(t, e + 2 * reg), IntTuple::tuple({row, col}));
      }
  }
  // Both cover the tile once: each has an inverse.
  EXPECT_EQ(src.inverse().size(), 256);
  EXPECT_EQ(dst.inverse().size(), 256);
}

// wgmma m64nN f32 accumulator (HOPPER.md §1): thread t = 32w + l holds in register i the element
// row = 16w + l/4 + 8*((i>>1)&1), col = 8*(i/4) + 2*(l%4) + (i&1).
TEST(TVLayout, WgmmaAccumulator) {
  for (int64 n : {8, 16, 64, 128, 256}) {
    Layout l =
        parse_layout("((4,8,4),(2,2," + std::to_string(n / 8) + ")):((128,1,16),(64,8,512))");
    TVLayout acc(l, IntTuple::tuple({64, n}));
    for (int64 t = 0; t < 128; ++t)
      for (int64 i = 0; i < n / 2; ++i) {
        int64 w = t / 32, ln = t % 32;
        int64 row = 16 * w + ln / 4 + 8 * ((i >> 1) & 1);
        int64 col = 8 * (i / 4) + 2 * (ln % 4) + (i & 1);
        ASSERT_EQ(acc.coord(t, i), IntTuple::tuple({row, col})) << "N=" << n;
      }
    EXPECT_EQ(acc.inverse().size(), 64 * n);
  }
  // The parametric form over (64,N), with N a multiple of 8, agrees once N is bound.
  Layout sym = parse_layout("((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))");
  EXPECT_EQ(to_string(sym), "((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))");
  Layout bound = sym.bind({{"N", 256}});
  Layout concrete = parse_layout("((4,8,4),(2,2,32)):((128,1,16),(64,8,512))");
  EXPECT_EQ(bound, concrete);
  EXPECT_EQ(sym.size_extent().str(), "64*N");  // 128 threads x N/2 values
}

TEST(TVLayout, InverseAndComposeContracts) {
  testing::LayoutGen g(22);
  for (int trial = 0; trial < 300; ++trial) {
    // A random bijection (T,V) -> tile of shape (M,N).
    std::vector<IntTuple> dims;
    for (int k = g.uniform(1, 4); k > 0; --k) dims.emplace_back(int64(1) << g.uniform(0, 2));
    IntTuple s(dims);
    std::vector<int64> strides(dims.size());
    int64 total = 1;
    for (const IntTuple& x : dims) total *= x.as_int();
    {  // a random order of the modes gives a random bijection onto [0, total)
      std::vector<size_t> order(dims.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), g.rng());
      int64 cur = 1;
      for (size_t i : order) {
        strides[i] = cur;
        cur *= dims[i].as_int();
      }
    }
    size_t k0 = 0;
    Layout perm(s, testing::LayoutGen::like(s, strides, k0));
    int64 m = int64(1) << g.uniform(0, 6);
    while (total % m != 0) m /= 2;
    int64 n = total / m;
    IntTuple tile = IntTuple::tuple({m, n});
    int64 threads = 1;
    for (int64 d = 1; d <= perm.size(); d *= 2) {
      if (perm.size() % d == 0 && g.coin()) threads = d;
    }
    Layout tv_layout = composition(perm, Layout(IntTuple::tuple({threads, perm.size() / threads})));
    TVLayout tv(tv_layout, tile);
    Layout inv = tv.inverse();
    for (int64 i = 0; i < m * n; ++i) ASSERT_EQ(tv.layout()(inv(i)), i) << tv.str();
    Layout row_major = make_layout_row_major(tile);
    Layout offsets = tv.compose(row_major);
    for (int64 t = 0; t < tv.num_threads(); ++t)
      for (int64 v = 0; v < tv.num_values(); ++v)
        ASSERT_EQ(offsets(t + tv.num_threads() * v), row_major(tv.index(t, v)));
  }
}

TEST(TVLayout, MakeTvLayout) {
  // 32 threads as 4x8 (row-major over the 4x8 thread grid), each holding a 2x4 block of values.
  Layout thr = parse_layout("(4,8):(8,1)");
  Layout val = parse_layout("(2,4)");
  TVLayout tv = make_tv_layout(thr, val);
  EXPECT_EQ(tv.tile_shape(), parse_int_tuple("(8,32)"));
  EXPECT_EQ(tv.num_threads(), 32);
  EXPECT_EQ(tv.num_values(), 8);
  std::vector<int> hits(256, 0);
  for (int64 t = 0; t < 32; ++t)
    for (int64 v = 0; v < 8; ++v) {
      IntTuple c = tv.coord(t, v);
      int64 row = c[0].as_int(), col = c[1].as_int();
      hits[row + 8 * col]++;
      // Thread t owns the block at thread-grid coordinate thr^-1(t), values in val's order.
      ASSERT_EQ(thr(IntTuple::tuple({row / 2, col / 4})), t);
      ASSERT_EQ(val(IntTuple::tuple({row % 2, col % 4})), v);
    }
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(TVLayout, ErrorsNameTheOperands) {
  try {
    TVLayout(parse_layout("(32,4):(1,64)"), parse_int_tuple("(16,8)"));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("outside the tile (16,8)"), std::string::npos) << e.message();
  }
  try {
    TVLayout(parse_layout("(32,2):(2,64)"), parse_int_tuple("(16,8)")).inverse();
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("has no inverse"), std::string::npos) << e.message();
  }
  try {
    TVLayout(parse_layout("32:1"), parse_int_tuple("(16,8)"));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("must have rank 2"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace tessel::layout
