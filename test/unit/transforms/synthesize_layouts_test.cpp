// Layout synthesis utilities and the pass through the IR: tiled mma fragments satisfy Hexcute's
// Appendix B equations (checked per executing group by brute force), coalesced layouts and
// projections keep their contracts, and the pass's choices on known kernels.
#include <gtest/gtest.h>

#include <set>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "layout/parse.h"
#include "support/diagnostics.h"
#include "target/cuda/atoms.h"
#include "transforms/layout/layout_utils.h"
#include "transforms/layout/synthesize_layouts.h"

namespace tessel::transforms {
namespace {

using ir::ScalarKind;
using layout::TVLayout;
using target::cuda::Target;

struct RC {
  int64_t r, c;
  bool operator<(const RC& o) const { return r != o.r ? r < o.r : c < o.c; }
};

// The elements (row, col) that threads [t0, t0+n) hold.
std::set<RC> held(const TVLayout& tv, int64_t t0, int64_t n) {
  std::set<RC> out;
  int64_t rows = tv.tile_shape()[0].as_int();
  std::vector<int64_t> table = tv_table(tv);
  int64_t T = tv.num_threads();
  for (int64_t t = t0; t < t0 + n && t < T; ++t)
    for (int64_t v = 0; v < tv.num_values(); ++v) {
      int64_t i = table[size_t(t + T * v)];
      out.insert({i % rows, i / rows});
    }
  return out;
}

// Appendix B, per executing group g: the C block it owns is rows(A_g) x cols(B_g), and A_g, B_g
// cover the whole K extent. Descriptor operands (one thread) are read whole by every group.
void expect_appendix_b(const MmaChoice& c, int64_t m, int64_t n, int64_t k) {
  int64_t group = c.atom.group_threads;
  for (int64_t g = 0; g < c.threads / group; ++g) {
    std::set<RC> cs = held(c.c, g * group, group);
    std::set<int64_t> crow, ccol, arow, brow, ak, bk;
    for (RC e : cs) crow.insert(e.r), ccol.insert(e.c);
    bool whole_a = c.a.num_threads() == 1, whole_b = c.b.num_threads() == 1;
    for (RC e : held(c.a, whole_a ? 0 : g * group, whole_a ? 1 : group))
      arow.insert(e.r), ak.insert(e.c);
    for (RC e : held(c.b, whole_b ? 0 : g * group, whole_b ? 1 : group))
      brow.insert(e.r), bk.insert(e.c);
    EXPECT_EQ(int64_t(cs.size()), int64_t(crow.size() * ccol.size())) << "C block of group " << g;
    if (!whole_a) {
      EXPECT_EQ(arow, crow) << c.str();
    }
    if (!whole_b) {
      EXPECT_EQ(brow, ccol) << c.str();
    }
    if (whole_a) {
      EXPECT_EQ(int64_t(arow.size()), m);
    }
    if (whole_b) {
      EXPECT_EQ(int64_t(brow.size()), n);
    }
    EXPECT_EQ(int64_t(ak.size()), k);
    EXPECT_EQ(int64_t(bk.size()), k);
  }
  // C is a bijection onto the tile.
  EXPECT_EQ(int64_t(held(c.c, 0, c.threads).size()), m * n);
  EXPECT_EQ(c.c.num_threads() * c.c.num_values(), m * n);
}

TEST(TileMma, EveryChoiceSatisfiesAppendixB) {
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {64, 64, 64}, {128, 256, 64}, {32, 32, 16}, {64, 128, 32}}) {
    for (bool a_reg : {false, true}) {
      auto list =
          mma_choices(Target::sm90a(), ScalarKind::f16, ScalarKind::f32, m, n, k, a_reg, false, 0);
      ASSERT_FALSE(list.empty());
      int checked = 0;
      for (const MmaChoice& c : list) {
        if (checked++ >= 12) break;
        SCOPED_TRACE(c.str());
        expect_appendix_b(c, m, n, k);
      }
    }
  }
}

TEST(TileMma, AccumulatorOfWgmmaIsTheRegisterAFragmentOfTheNext) {
  // FA3: the m64nN accumulator, converted pairwise, is the RS A operand of an mma with K = N.
  auto s = tile_mma(target::cuda::wgmma(ScalarKind::f16, 64, false), 64, 64, 64, 1, 1);
  auto pv = tile_mma(target::cuda::wgmma(ScalarKind::f16, 64, true), 64, 64, 64, 1, 1);
  EXPECT_TRUE(same_tv(s.c, pv.a)) << s.c.str() << " vs " << pv.a.str();
  // mma.sync tiled along M only (FA2) has the same property; tiled 2x2 it does not.
  auto s41 = tile_mma(target::cuda::mma_sync_m16n8k16(ScalarKind::f16), 64, 64, 64, 4, 1);
  auto s22 = tile_mma(target::cuda::mma_sync_m16n8k16(ScalarKind::f16), 64, 64, 64, 2, 2);
  EXPECT_TRUE(same_tv(s41.c, s41.a));
  EXPECT_FALSE(same_tv(s22.c, s41.a));
}

TEST(MmaChoices, CooperativeTileNeedsTwoWarpgroups) {
  auto list = mma_choices(Target::sm90a(), ScalarKind::bf16, ScalarKind::f32, 128, 256, 64, false,
                          false, 0);
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list[0].atom.name, "wgmma.m64n256k16.f32.bf16.ss");
  EXPECT_EQ(list[0].tm, 2);
  EXPECT_EQ(list[0].tn, 1);
  EXPECT_EQ(list[0].threads, 256);
  EXPECT_EQ(list[0].c.num_values(), 128);
  for (const MmaChoice& c : list) {
    if (c.threads == 128) {
      EXPECT_FALSE(c.feasible) << c.str();
    }
  }
  // sm_80 has only mma.sync; fp8 there has nothing.
  auto sm80 =
      mma_choices(Target::sm80(), ScalarKind::f16, ScalarKind::f32, 64, 64, 16, false, false, 128);
  ASSERT_FALSE(sm80.empty());
  for (const MmaChoice& c : sm80) EXPECT_EQ(c.atom.name, "mma.sync.m16n8k16.f32.f16");
  EXPECT_TRUE(mma_choices(Target::sm80(), ScalarKind::f8e4m3, ScalarKind::f32, 64, 64, 32, false,
                          false, 128)
                  .empty());
}

TEST(Coalesced, SixteenByteVectorsAlongTheRow) {
  TVLayout tv = coalesced_layout({4, 64}, 16, 128);
  // 8 threads across a row of 64 f16, 8 each; 4 rows; 32 threads in all.
  EXPECT_EQ(tv.num_threads(), 32);
  EXPECT_EQ(tv.num_values(), 8);
  for (int64_t t = 0; t < 32; ++t)
    for (int64_t v = 0; v < 8; ++v) {
      int64_t i = tv.index(t, v);
      EXPECT_EQ(i % 4, t / 8);
      EXPECT_EQ(i / 4, 8 * (t % 8) + v);
    }
  TVLayout big = coalesced_layout({128, 64}, 32, 128);
  EXPECT_EQ(big.num_threads() * big.num_values(), 128 * 64);
  EXPECT_EQ(held(big, 0, 128).size(), size_t(128 * 64));
  EXPECT_THROW(coalesced_layout({2, 2, 2}, 16, 128), UserError);
}

TEST(Coalesced, SpansAFixedBlockByCopies) {
  // A [512] f16 row in a block of 1024 threads: 64 threads hold it, 16 times over.
  TVLayout row = coalesced_layout({512}, 16, 1024, /*span_threads=*/true);
  EXPECT_EQ(row.num_threads(), 1024);
  EXPECT_EQ(row.num_values(), 8);
  for (int64_t t = 0; t < 1024; ++t)
    for (int64_t v = 0; v < 8; ++v) EXPECT_EQ(row.index(t, v), 8 * (t % 64) + v);
  // A 2-D tile is not replicated (a reduce across threads would count its copies twice).
  TVLayout small = coalesced_layout({4, 64}, 16, 128, /*span_threads=*/true);
  EXPECT_EQ(small.num_threads(), 32);
  // A tile that fills the block is the same either way.
  TVLayout big = coalesced_layout({16, 512}, 16, 1024, true);
  EXPECT_EQ(big.num_threads(), 1024);
  EXPECT_EQ(big.str(), coalesced_layout({16, 512}, 16, 1024).str());
}

TEST(Project, ReduceKeepsOneValuePerRowAndSharesItAmongTheRowsThreads) {
  auto c = tile_mma(target::cuda::mma_sync_m16n8k16(ScalarKind::f16), 64, 64, 16, 4, 1).c;
  TVLayout rows = project_layout(c, {64, 64}, {1});
  EXPECT_EQ(rows.num_threads(), 128);
  EXPECT_EQ(rows.num_values(), 2);  // rows g and g+8 of the thread's warp
  std::vector<int64_t> ct = tv_table(c);
  for (int64_t t = 0; t < 128; ++t) {
    std::set<int64_t> want;
    for (int64_t v = 0; v < c.num_values(); ++v) want.insert(ct[size_t(t + 128 * v)] % 64);
    std::set<int64_t> got;
    for (int64_t v = 0; v < 2; ++v) got.insert(rows.index(t, v));
    EXPECT_EQ(got, want) << "thread " << t;
  }
  // The 4 lanes of a quad hold the same rows: their thread stride is 0.
  EXPECT_EQ(rows.index(0, 0), rows.index(3, 0));
  EXPECT_NE(rows.index(0, 0), rows.index(4, 0));
}

// slice_layout: a [128,64] column block of the two-warpgroup m64n256 wgmma accumulator is the
// m64n64 accumulator's layout, the same threads holding the block's elements; windows that cut
// a thread mode or a mode's steps have none.
TEST(Slice, ColumnBlockOfAWgmmaAccumulatorIsTheNarrowAccumulator) {
  const TVLayout acc(layout::parse_layout("(((4,8,4),2),(2,2,32)):(((256,1,16),64),(128,8,1024))"),
                     layout::IntTuple::tuple({128, 256}));
  for (int64_t col : {0, 64, 128, 192}) {
    auto part = slice_layout(acc, {128, 256}, {0, col}, {128, 64});
    ASSERT_TRUE(part.has_value()) << col;
    EXPECT_EQ(layout::to_string(part->layout()),
              "(((4,8,4),2),(2,2,8)):(((256,1,16),64),(128,8,1024))");
    // Every value of the part is the value of the whole at the shifted coordinate, same thread.
    std::set<int64_t> whole;
    for (int64_t t = 0; t < 256; ++t)
      for (int64_t v = 0; v < acc.num_values(); ++v) whole.insert(t * 1000000 + acc.index(t, v));
    for (int64_t t = 0; t < 256; ++t) {
      for (int64_t v = 0; v < part->num_values(); ++v) {
        const int64_t i = part->index(t, v);
        EXPECT_TRUE(whole.count(t * 1000000 + i % 128 + 128 * (i / 128 + col)));
      }
    }
  }
  auto wide = slice_layout(acc, {128, 256}, {0, 128}, {128, 128});
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->num_values(), 64);
  // Rows: the warpgroup and warp modes are thread modes; columns 4 wide cut a thread mode.
  EXPECT_FALSE(slice_layout(acc, {128, 256}, {64, 0}, {64, 256}).has_value());
  EXPECT_FALSE(slice_layout(acc, {128, 256}, {0, 0}, {128, 4}).has_value());
  // Not at a multiple of the outer step (8 columns).
  EXPECT_FALSE(slice_layout(acc, {128, 256}, {0, 4}, {128, 64}).has_value());
}

const char* kAttention = R"(
kernel @attention(%Q: global<f16>[64,64], %K: global<f16>[64,64], %V: global<f16>[64,64], %O: global<f16>[64,64]) {
  %c0 = const {value = 0} : index
  %c1 = const {value = 1} : index
  %i = block_grid %c1 {target = "sm_80"} : index
  %tq = tile %Q, %c0, %c0 {shape = [64,64]} : global<f16>[64,64]
  %q = copy %tq : shared<f16>[64,64]
  %tk = tile %K, %c0, %c0 {shape = [64,64]} : global<f16>[64,64]
  %k = copy %tk : shared<f16>[64,64]
  %tv = tile %V, %c0, %c0 {shape = [64,64]} : global<f16>[64,64]
  %v = copy %tv : shared<f16>[64,64]
  %kt = transpose %k : shared<f16>[64,64]
  %z = fill {value = 0.0} : register<f32>[64,64]
  %s = mma %q, %kt, %z TILING : register<f32>[64,64]
  %ph = cast %s : register<f16>[64,64]
  %o = mma %ph, %v, %z : register<f32>[64,64]
  %oh = cast %o : register<f16>[64,64]
  %to = tile %O, %c0, %c0 {shape = [64,64]} : global<f16>[64,64]
  copy %oh, %to
}
)";

std::string with(const char* text, const std::string& tiling) {
  std::string s = text;
  s.replace(s.find("TILING"), 6, tiling);
  return s;
}

int count_ops(const ir::Operation& kernel, ir::OpKind kind) {
  int n = 0;
  walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) { n += op->kind() == kind; });
  return n;
}

TEST(Pass, RearrangeOnlyWhenTheMappingForcesIt) {
  auto free = ir::parse_module(with(kAttention, ""), "a.tir");
  synthesize_layouts(*free);
  ir::verify(*free);
  EXPECT_EQ(count_ops(*free->kernels[0], ir::OpKind::rearrange), 0) << ir::print(*free);
  auto pinned = ir::parse_module(with(kAttention, "{tiling = [2,2]}"), "a.tir");
  synthesize_layouts(*pinned);
  ir::verify(*pinned);
  EXPECT_EQ(count_ops(*pinned->kernels[0], ir::OpKind::rearrange), 1) << ir::print(*pinned);
  // Every register tensor has a layout now.
  walk(pinned->kernels[0].get(), [&](ir::Operation* op) {
    for (const auto& r : op->results()) {
      if (r->type().is_tensor() && r->type().space() == ir::MemorySpace::reg) {
        EXPECT_TRUE(r->type().has_layout()) << r->name();
      }
    }
  });
}

TEST(Pass, PinnedAccumulatorThatNoTilingMakesNamesTheOp) {
  std::string text = with(kAttention, "");
  text.replace(text.find("register<f32>[64,64]\n  %s"), 20,
               "register<f32, ((8,16),(8,4)):((512,1),(64,16))>[64,64]");
  auto m = ir::parse_module(text, "a.tir");
  try {
    synthesize_layouts(*m);
    FAIL();
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("a.tir:14:3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mma: the pinned layout ((8,16),(8,4)):((512,1),(64,16))"),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace tessel::transforms
