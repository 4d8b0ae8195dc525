// Shared-memory layout synthesis: tiled atoms, alignment unification, canonical TMA/wgmma layouts,
// and the swizzle search, checked by brute force and against the bank model's known answers.
#include <gtest/gtest.h>

#include "layout/parse.h"
#include "support/diagnostics.h"
#include "target/cuda/atoms.h"
#include "transforms/layout/layout_utils.h"
#include "transforms/layout/shared_layout.h"

namespace tessel::transforms {
namespace {

using layout::ComposedLayout;
using layout::IntTuple;
using layout::Layout;
using layout::Swizzle;
using layout::TVLayout;

IntTuple shape2(int64_t r, int64_t c) {
  return IntTuple::tuple({r, c});
}

TEST(LayoutUtils, TableMatchesTheLayoutLibrary) {
  for (const char* text : {"((4,8),(2,2)):((32,1),(16,8))", "(3,(2,5)):(7,(1,30))", "8:0"}) {
    Layout l = layout::parse_layout(text);
    std::vector<int64_t> t = layout_table(l);
    ASSERT_EQ(int64_t(t.size()), l.size());
    for (int64_t i = 0; i < l.size(); ++i) EXPECT_EQ(t[i], l(i)) << text << " at " << i;
  }
}

TEST(LayoutUtils, TileAtomShiftsTheAtomOverTheTile) {
  target::cuda::Atom mma = target::cuda::mma_sync_m16n8k16(ir::ScalarKind::f16);
  // 4 warps as 2x2 over a 64x32 accumulator: each warp repeats its atom 2x2 times.
  TVLayout tiled = tile_atom(*mma.c, 64, 32, 2, 2);
  EXPECT_EQ(tiled.num_threads(), 128);
  EXPECT_EQ(tiled.num_values(), 4 * 4);
  for (int64_t t = 0; t < 128; ++t) {
    int64_t lane = t % 32, i = (t / 32) % 2, j = t / 64;
    for (int64_t v = 0; v < 16; ++v) {
      int64_t av = v % 4, a = (v / 4) % 2, b = v / 8;
      int64_t idx = mma.c->index(lane, av);
      int64_t r = idx % 16 + 16 * (i + 2 * a), c = idx / 16 + 8 * (j + 2 * b);
      ASSERT_EQ(tiled.index(t, v), r + 64 * c) << t << "," << v;
    }
  }
  EXPECT_THROW(tile_atom(*mma.c, 48, 32, 2, 2), UserError);
}

// A coalesced copy of a row-major (rows, cols) tile: 128 threads, 8 contiguous elements each.
SharedAccess row_copy(int64_t rows, int64_t cols) {
  int64_t chunks = cols / 8, trows = 128 / chunks;
  Layout l(IntTuple::tuple({IntTuple::tuple({chunks, trows}), IntTuple::tuple({8, rows / trows})}),
           IntTuple::tuple({IntTuple::tuple({8 * rows, 1}), IntTuple::tuple({rows, trows})}));
  return SharedAccess::from_tv("copy (st.shared.b128)", TVLayout(l, shape2(rows, cols)), 8);
}

SharedAccess ldmatrix_read(int64_t rows, int64_t cols, int64_t warps_m, int64_t warps_n) {
  target::cuda::Atom ld = target::cuda::ldmatrix(4, false);
  return SharedAccess::from_tv("copy (ldmatrix.x4.b16)",
                               tile_atom(*ld.src, rows, cols, warps_m, warps_n), 8);
}

TEST(SharedLayout, LdmatrixOnRowMajor64x64ConflictsAndSw333RemovesIt) {
  SharedAccess write = row_copy(64, 64), read = ldmatrix_read(64, 64, 4, 1);
  // The unified layout is row-major (the rows of the global tile stay rows).
  Layout base = unify_alignment(shape2(64, 64), {write, read}, "%a");
  ComposedLayout plain(Swizzle(), 0, base);
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 64; ++c) ASSERT_EQ(plain(r + 64 * c), 64 * r + c);
  // Unswizzled: each 8-lane phase of ldmatrix reads one 16-byte column chunk of 8 rows that are
  // 128 bytes apart: 8-way.
  EXPECT_EQ(count_conflicts(plain, read, 16).degree(), 8.0);
  EXPECT_EQ(count_conflicts(plain, write, 16).degree(), 1.0);
  ComposedLayout sw(Swizzle(3, 3, 3), 0, base);
  EXPECT_EQ(check_alignment(sw, read), "");
  EXPECT_EQ(count_conflicts(sw, read, 16).degree(), 1.0);
  EXPECT_EQ(count_conflicts(sw, write, 16).degree(), 1.0);
  // The search finds it.
  SharedLayoutChoice choice = choose_swizzle(base, {write, read}, 16);
  EXPECT_EQ(choice.layout.swizzle(), Swizzle(3, 3, 3)) << choice.reason;
  ASSERT_EQ(choice.accesses.size(), 2u);
  for (const AccessReport& a : choice.accesses) EXPECT_EQ(a.banks.degree(), 1.0) << a.who;
  EXPECT_NE(choice.reason.find("Sw<3,3,3> takes 128 wavefronts, unswizzled 576"), std::string::npos)
      << choice.reason;
}

TEST(SharedLayout, SwizzleThatBreaksVectorsIsRejected) {
  SharedAccess read = ldmatrix_read(64, 64, 4, 1);
  ComposedLayout bad(Swizzle(3, 2, 3), 0, Layout(shape2(64, 64), IntTuple::tuple({64, 1})));
  std::string problem = check_alignment(bad, read);
  EXPECT_NE(problem.find("thread 0's vector 2 starts at offset 36, not a multiple of 8"),
            std::string::npos)
      << problem;
}

TEST(SharedLayout, ColumnVectorsGiveAColumnMajorLayout) {
  // A transposed read: each thread's 8 values run down a column.
  Layout l(IntTuple::tuple({IntTuple::tuple({8, 16}), 8}),
           IntTuple::tuple({IntTuple::tuple({8, 64}), 1}));
  SharedAccess col = SharedAccess::from_tv("copy (column vectors)", TVLayout(l, shape2(64, 16)), 8);
  Layout base = unify_alignment(shape2(64, 16), {col}, "%t");
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 16; ++c) ASSERT_EQ(base(r + 64 * c), r % 8 + 8 * c + 128 * (r / 8));
  EXPECT_EQ(check_alignment(ComposedLayout(Swizzle(), 0, base), col), "");
}

TEST(SharedLayout, ConflictingVectorsNameBothAccesses) {
  SharedAccess rows = row_copy(64, 16);
  Layout l(IntTuple::tuple({IntTuple::tuple({8, 16}), 8}),
           IntTuple::tuple({IntTuple::tuple({8, 64}), 1}));
  SharedAccess cols =
      SharedAccess::from_tv("copy at k.tir:9:3 (column vectors)", TVLayout(l, shape2(64, 16)), 8);
  try {
    unify_alignment(shape2(64, 16), {rows, cols}, "%s");
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("shared tensor %s: no layout gives both accesses contiguous aligned vectors"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("copy (st.shared.b128)"), std::string::npos) << m;
    EXPECT_NE(m.find("copy at k.tir:9:3 (column vectors)"), std::string::npos) << m;
  }
}

// HOPPER.md §2-3: K-major SW128/64/32 atoms are 8 rows x 128/64/32 bytes, 8-row groups 1024/512/
// 256 bytes apart, column slices after all rows, and the swizzle a ^ (((a >> 7) & mask) << 4).
TEST(SharedLayout, CanonicalTmaLayoutsAreTheHardwareOnes) {
  struct Case {
    int64_t rows, cols;
    int bits, span;
  };
  for (Case k : {Case{128, 64, 16, 128}, Case{64, 128, 16, 128}, Case{256, 64, 16, 128},
                 Case{64, 32, 16, 64}, Case{64, 16, 16, 32}, Case{128, 128, 8, 128},
                 Case{64, 32, 32, 128}}) {
    ComposedLayout m = canonical_tma_layout(k.rows, k.cols, k.bits);
    int64_t atom_cols = k.span * 8 / k.bits;
    int64_t mask = k.span / 16 - 1;
    for (int64_t r = 0; r < k.rows; ++r) {
      for (int64_t c = 0; c < k.cols; ++c) {
        int64_t byte =
            (c / atom_cols) * k.rows * k.span + r * k.span + (c % atom_cols) * k.bits / 8;
        int64_t hw = byte ^ (((byte >> 7) & mask) << 4);
        ASSERT_EQ(m(r + k.rows * c) * k.bits / 8, hw) << m.str() << " at (" << r << "," << c << ")";
      }
    }
  }
  EXPECT_EQ(canonical_tma_layout(128, 64, 16).str(), "Sw<3,3,3> o 0 o (128,64):(64,1)");
  EXPECT_TRUE(canonical_tma_layout(64, 8, 16).swizzle().is_identity());  // 16-byte rows
  EXPECT_THROW(canonical_tma_layout(12, 64, 16), UserError);
}

// The GEMM operand tiles: TMA writes a 128x64 f16 K-major tile; ldmatrix (mma.sync path) reads it
// with 0 conflicts; wgmma reads it through a descriptor.
TEST(SharedLayout, TmaTileReadByLdmatrixIsConflictFree) {
  SharedAccess tma = SharedAccess::bulk("copy (tma.load.2d.box128x64.sw128)", AccessKind::tma);
  SharedAccess read = ldmatrix_read(128, 64, 4, 1);
  SharedLayoutChoice c = synthesize_shared_layout(shape2(128, 64), 16, {tma, read}, "%a");
  EXPECT_EQ(c.layout.str(), "Sw<3,3,3> o 0 o (128,64):(64,1)");
  EXPECT_EQ(c.accesses[1].banks.degree(), 1.0);
  EXPECT_EQ(c.accesses[1].banks.wavefronts, 128 * 64 * 2 / 128);
  EXPECT_NE(c.reason.find("canonical layout required by TMA"), std::string::npos);
  // A thread access whose vectors the canonical layout splits is an error naming both.
  Layout l(IntTuple::tuple({IntTuple::tuple({16, 64}), 8}),
           IntTuple::tuple({IntTuple::tuple({8, 128}), 1}));  // vectors down a column
  SharedAccess col =
      SharedAccess::from_tv("copy (column vectors)", TVLayout(l, shape2(128, 64)), 8);
  try {
    synthesize_shared_layout(shape2(128, 64), 16, {tma, col}, "%a");
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("shared tensor %a: copy (column vectors) cannot use the canonical layout "
                     "Sw<3,3,3> o 0 o (128,64):(64,1) that copy (tma.load.2d.box128x64.sw128) "
                     "requires"),
              std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace tessel::transforms

namespace tessel::transforms {
namespace {

// Known answer (Hexcute §7.3): the shared layout ((8,2,8),(2,64)):((4,2,2048),(1,32)) of a 128x128
// int4 tile [K, N] that ldmatrix loads straight into mma.sync B fragments. ldmatrix moves 16-bit
// units, four int4 each; under that layout one unit is {n, n+1} x {k, k+8} (offsets 1 and 2), the
// 8 units of a 16-byte row are k, k+1, ..., k+7 (offset 4), and a row holds 16 k x 2 n. The
// register fragment here is what x4 ldmatrix delivers from that layout to 4 warps (warp w, chunk
// c, matrix j, row r reads row r + 8j + 32c + 128w). The test checks that this fragment is an mma
// m16n8k16 B fragment (lane l holds k in {2(l%4), +1, +8, +9} mod 16 of column l/4 of an n-atom
// whose 8 columns are interleaved by 2), and that synthesis, knowing only the fragment, recovers
// exactly Hexcute's layout (as a function), with no swizzle and no bank conflict.
TEST(SharedLayoutKnownAnswer, HexcutePackedInt4LayoutForLdmatrix) {
  const int64_t K = 128, N = 128, T = 128, V = K * N / T;
  Layout hexcute = layout::parse_layout("((8,2,8),(2,64)):((4,2,2048),(1,32))");
  std::vector<int64_t> h = layout_table(hexcute);  // tile index k + K*n -> int4 offset
  std::vector<int64_t> inverse(h.size(), -1);
  for (size_t i = 0; i < h.size(); ++i) inverse[size_t(h[i])] = int64_t(i);
  std::vector<int64_t> table(size_t(T * V));
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t l = 0; l < 32; ++l)
          for (int64_t hh = 0; hh < 2; ++hh)
            for (int64_t e = 0; e < 4; ++e) {
              int64_t row = l / 4 + 8 * j + 32 * c + 128 * w;
              int64_t off = 32 * row + 4 * (2 * (l % 4) + hh) + e;
              int64_t v = (c * 8 + 2 * j + hh) * 4 + e;
              table[size_t(32 * w + l + T * v)] = inverse[size_t(off)];
            }
  for (int64_t t = 0; t < T; ++t)
    for (int64_t v = 0; v < V; ++v) {
      int64_t i = table[size_t(t + T * v)], k = i % K, n = i / K, q = (t % 32) % 4;
      int64_t kk = k % 16;
      EXPECT_TRUE(kk == 2 * q || kk == 2 * q + 1 || kk == 2 * q + 8 || kk == 2 * q + 9)
          << "thread " << t << " value " << v << " k " << k;
      EXPECT_EQ((n / 2) % 8, (t % 32) / 4) << "thread " << t << " value " << v << " n " << n;
    }
  // 16-bit matching does not apply; the packed one does, with 32-element rows.
  EXPECT_FALSE(match_ldmatrix(table, T, V, K, N, 4, false, 1, 16).has_value());
  std::optional<SharedAccess> a = match_ldmatrix(table, T, V, K, N, 4, false, 1, 4);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->vector_elems, 32);
  a->who = "copy (ldmatrix.x4.b16)";
  SharedLayoutChoice choice = synthesize_shared_layout(shape2(K, N), 4, {*a}, "%sW");
  EXPECT_TRUE(choice.layout.swizzle().is_identity()) << choice.layout.str();
  EXPECT_EQ(layout_table(choice.layout), h) << choice.layout.str();
  EXPECT_EQ(layout::to_string(choice.layout.layout()), "((8,2,8),(2,64)):((4,2,2048),(1,32))");
  ASSERT_EQ(choice.accesses.size(), 1u);
  EXPECT_EQ(choice.accesses[0].banks.wavefronts, choice.accesses[0].banks.ideal)
      << choice.accesses[0].banks.str();
  // Packed units have no transposed form, and a fragment whose thread holds fewer values than
  // one ldmatrix.x4 delivers per lane (8 units of 4) has no x4 match.
  EXPECT_FALSE(match_ldmatrix(table, T, V, K, N, 4, true, 1, 4).has_value());
  std::vector<int64_t> shorter(table.begin(), table.begin() + T * 16);
  EXPECT_FALSE(match_ldmatrix(shorter, T, 16, K, N, 4, false, 1, 4).has_value());
  EXPECT_TRUE(match_ldmatrix(shorter, T, 16, K, N, 2, false, 1, 4).has_value());
  // A swizzle that reorders the int4 values inside a unit (Sw<1,1,5> flips offset bit 1, k vs
  // k+8, in every other pair of rows) breaks the contract.
  EXPECT_NE(check_alignment(ComposedLayout(Swizzle(1, 1, 5), 0, hexcute), *a), "");
}

}  // namespace
}  // namespace tessel::transforms
