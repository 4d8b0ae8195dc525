// Each atom's thread-value layouts against the documented fragment formulas, element by element.
#include <gtest/gtest.h>

#include <set>

#include "support/diagnostics.h"
#include "target/cuda/atoms.h"
#include "target/cuda/target.h"

namespace tessel::target::cuda {
namespace {

using ir::MemorySpace;
using ir::ScalarKind;

// (row, col) of value v of thread t in a TV layout over a 2-D tile.
std::pair<int64_t, int64_t> rc(const layout::TVLayout& tv, int64_t t, int64_t v) {
  int64_t rows = tv.tile_shape()[0].as_int();
  int64_t i = tv.index(t, v);
  return {i % rows, i / rows};
}

// Every element of the tile is held by exactly one (thread, value).
void expect_bijection(const layout::TVLayout& tv) {
  std::set<int64_t> seen;
  for (int64_t t = 0; t < tv.num_threads(); ++t)
    for (int64_t v = 0; v < tv.num_values(); ++v) seen.insert(tv.index(t, v));
  EXPECT_EQ(int64_t(seen.size()), tv.num_threads() * tv.num_values()) << tv.str();
  EXPECT_EQ(int64_t(seen.size()), layout::product(tv.tile_shape()).constant()) << tv.str();
}

TEST(MmaSync, M16N8K16MatchesPtxFragments) {
  Atom a = mma_sync_m16n8k16(ScalarKind::f16);
  EXPECT_EQ(a.group_threads, 32);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane >> 2, q = lane & 3;
    for (int i = 0; i < 8; ++i) {  // A halves
      auto [r, c] = rc(*a.a, lane, i);
      EXPECT_EQ(r, g + 8 * ((i >> 1) & 1)) << "A lane " << lane << " half " << i;
      EXPECT_EQ(c, 2 * q + (i & 1) + 8 * (i >> 2)) << "A lane " << lane << " half " << i;
    }
    for (int i = 0; i < 4; ++i) {  // B halves over (N,K)
      auto [n, k] = rc(*a.b, lane, i);
      EXPECT_EQ(k, 2 * q + (i & 1) + 8 * (i >> 1));
      EXPECT_EQ(n, g);
    }
    for (int i = 0; i < 4; ++i) {  // C floats
      auto [r, c] = rc(*a.c, lane, i);
      EXPECT_EQ(r, g + 8 * (i >> 1));
      EXPECT_EQ(c, 2 * q + (i & 1));
    }
  }
  expect_bijection(*a.a);
  expect_bijection(*a.b);
  expect_bijection(*a.c);
  EXPECT_THROW(mma_sync_m16n8k16(ScalarKind::f32), UserError);
}

// PTX m16n8k32 with 8-bit A/B: a_i at row g + 8((i>>2)&1), column 4q + (i&3) + 16(i>>3);
// b_i at k = 4q + (i&3) + 16(i>>2), n = g; C as m16n8k16.
TEST(MmaSync, M16N8K32Fp8MatchesPtxFragments) {
  Atom a = mma_sync_m16n8k32_fp8(ScalarKind::f8e4m3);
  EXPECT_EQ(a.min_sm, 89);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane >> 2, q = lane & 3;
    for (int i = 0; i < 16; ++i) {
      auto [r, c] = rc(*a.a, lane, i);
      EXPECT_EQ(r, g + 8 * ((i >> 2) & 1));
      EXPECT_EQ(c, 4 * q + (i & 3) + 16 * (i >> 3));
    }
    for (int i = 0; i < 8; ++i) {
      auto [n, k] = rc(*a.b, lane, i);
      EXPECT_EQ(k, 4 * q + (i & 3) + 16 * (i >> 2));
      EXPECT_EQ(n, g);
    }
  }
  expect_bijection(*a.a);
  expect_bijection(*a.b);
  EXPECT_EQ(a.c->layout(), mma_sync_m16n8k16(ScalarKind::f16).c->layout());
  EXPECT_THROW(mma_sync_m16n8k32_fp8(ScalarKind::f16), UserError);
  EXPECT_TRUE(Target::sm80().mma_atoms(ScalarKind::f8e4m3, ScalarKind::f32).empty());
}

TEST(Wgmma, AccumulatorMatchesHopperFormula) {
  for (int n : {8, 16, 64, 120, 256}) {
    Atom a = wgmma(ScalarKind::bf16, n, false);
    EXPECT_EQ(a.name, "wgmma.m64n" + std::to_string(n) + "k16.f32.bf16.ss");
    EXPECT_EQ(a.c->num_values(), n / 2);  // N/2 f32 accumulators per thread
    for (int t = 0; t < 128; ++t) {
      int w = t / 32, l = t % 32;
      for (int i = 0; i < n / 2; ++i) {
        auto [r, c] = rc(*a.c, t, i);
        ASSERT_EQ(r, 16 * w + l / 4 + 8 * ((i >> 1) & 1)) << "n" << n << " t" << t << " i" << i;
        ASSERT_EQ(c, 8 * (i / 4) + 2 * (l % 4) + (i & 1)) << "n" << n << " t" << t << " i" << i;
      }
    }
    expect_bijection(*a.c);
    // Descriptor operands: read by the warpgroup as a whole, held by no thread.
    EXPECT_EQ(a.a->num_threads(), 1);
    EXPECT_EQ(a.a->num_values(), 64 * 16);
    EXPECT_EQ(a.b->tile_shape(), layout::IntTuple::tuple({n, 16}));
  }
}

TEST(Wgmma, RegisterAIs16BitFormulaWithK16AndFp8K32) {
  Atom a = wgmma(ScalarKind::f16, 128, true);
  EXPECT_TRUE(a.a_in_registers);
  for (int t = 0; t < 128; ++t) {
    int w = t / 32, l = t % 32;
    for (int i = 0; i < 8; ++i) {
      auto [r, c] = rc(*a.a, t, i);
      EXPECT_EQ(r, 16 * w + l / 4 + 8 * ((i >> 1) & 1));
      EXPECT_EQ(c, 8 * (i / 4) + 2 * (l % 4) + (i & 1));
    }
  }
  expect_bijection(*a.a);
  // fp8 (PTX wgmma .m64nNk32 A fragment): a0..a3 row g cols 4q..4q+3, a4..a7 row g+8, a8..a15
  // the same 16 columns further.
  Atom f = wgmma(ScalarKind::f8e4m3, 64, true);
  EXPECT_EQ(f.k, 32);
  for (int t = 0; t < 128; ++t) {
    int w = t / 32, l = t % 32;
    for (int i = 0; i < 16; ++i) {
      auto [r, c] = rc(*f.a, t, i);
      EXPECT_EQ(r, 16 * w + l / 4 + 8 * ((i >> 2) & 1));
      EXPECT_EQ(c, 4 * (l % 4) + (i & 3) + 16 * (i >> 3));
    }
  }
  expect_bijection(*f.a);
}

TEST(Wgmma, RejectsShapesAndTypesWithoutAnInstruction) {
  try {
    wgmma(ScalarKind::f16, 12, false);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("wgmma N is a multiple of 8 in [8, 256], not 12"),
              std::string::npos);
  }
  EXPECT_THROW(wgmma(ScalarKind::f16, 264, false), UserError);
  try {
    wgmma(ScalarKind::i8, 64, false);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no wgmma for i8"), std::string::npos);
  }
}

// PTX ldmatrix: lanes 8j..8j+7 address the rows of matrix j; register j of lane l holds row l/4,
// columns 2(l%4), +1 of matrix j (.trans: column l/4, rows 2(l%4), +1). Matrix j sits at
// (8(j&1), 8(j>>1)).
TEST(Ldmatrix, MatchesPtxFragmentsForEveryCountAndTranspose) {
  for (int count : {1, 2, 4}) {
    for (bool trans : {false, true}) {
      Atom a = ldmatrix(count, trans);
      SCOPED_TRACE(a.name);
      EXPECT_EQ(a.src_space, MemorySpace::shared);
      EXPECT_EQ(a.dst_space, MemorySpace::reg);
      EXPECT_EQ(a.dst->num_values(), 2 * count);
      for (int l = 0; l < 32; ++l) {
        for (int j = 0; j < count; ++j) {
          for (int h = 0; h < 2; ++h) {
            auto [r, c] = rc(*a.dst, l, 2 * j + h);
            int64_t mr = r - 8 * (j & 1), mc = c - 8 * (j >> 1);
            if (!trans) {
              EXPECT_EQ(mr, l / 4);
              EXPECT_EQ(mc, 2 * (l % 4) + h);
            } else {
              EXPECT_EQ(mc, l / 4);
              EXPECT_EQ(mr, 2 * (l % 4) + h);
            }
          }
        }
        // Addresses: lane l < 8*count gives row l%8 of matrix l/8: 8 contiguous elements.
        if (l < 8 * count) {
          int j = l / 8;
          for (int v = 0; v < 8; ++v) {
            auto [r, c] = rc(*a.src, l, v);
            EXPECT_EQ(r, 8 * (j & 1) + l % 8);
            EXPECT_EQ(c, 8 * (j >> 1) + v);
          }
        }
      }
      expect_bijection(*a.dst);
    }
  }
}

// The ldmatrix contract that makes ldmatrix.x4 the mma.sync A loader: its registers are exactly
// the A fragment of m16n8k16 (HOPPER.md §7: lane l pointing at row l%16, column 8(l/16)).
TEST(Ldmatrix, X4RegistersAreTheMmaSyncAFragment) {
  Atom ld = ldmatrix(4, false);
  Atom mma = mma_sync_m16n8k16(ScalarKind::bf16);
  EXPECT_EQ(ld.dst->layout(), mma.a->layout());
  EXPECT_EQ(ld.dst->tile_shape(), mma.a->tile_shape());
  for (int l = 0; l < 32; ++l) {
    auto [r, c] = rc(*ld.src, l, 0);
    EXPECT_EQ(r, l % 16);
    EXPECT_EQ(c, 8 * (l / 16));
  }
}

TEST(Stmatrix, IsLdmatrixReversedAndNeedsSm90) {
  Atom st = stmatrix(4, false), ld = ldmatrix(4, false);
  EXPECT_EQ(st.src->layout(), ld.dst->layout());
  EXPECT_EQ(st.dst->layout(), ld.src->layout());
  EXPECT_FALSE(Target::sm80().has(st));
  EXPECT_TRUE(Target::sm90a().has(st));
}

TEST(VectorCopy, OneThreadContiguousValues) {
  for (int bytes : {1, 2, 4, 8, 16}) {
    Atom a = vector_copy(MemorySpace::global, MemorySpace::reg, bytes, 8);
    EXPECT_EQ(a.vector_elems, bytes);
    EXPECT_EQ(a.align_bytes, bytes);
    for (int v = 0; v < bytes; ++v) EXPECT_EQ(a.src->index(0, v), v);
  }
  Atom s = vector_copy(MemorySpace::reg, MemorySpace::shared, 16, 16);
  EXPECT_EQ(s.name, "st.shared.b128");
  EXPECT_EQ(s.vector_elems, 8);
  EXPECT_THROW(vector_copy(MemorySpace::global, MemorySpace::reg, 3, 8), UserError);
  EXPECT_THROW(vector_copy(MemorySpace::global, MemorySpace::reg, 2, 32), UserError);
  EXPECT_THROW(vector_copy(MemorySpace::global, MemorySpace::shared, 16, 16), UserError);
  Atom c = cp_async(16, 16);
  EXPECT_EQ(c.src_space, MemorySpace::global);
  EXPECT_EQ(c.dst_space, MemorySpace::shared);
  EXPECT_THROW(cp_async(2, 16), UserError);
}

// HOPPER.md §3: TMA 128B swizzle is a ^ (((a>>7)&7)<<4) on byte addresses; the atom states it in
// element units.
TEST(Tma, SwizzleMatchesHardwareRuleInElementUnits) {
  for (int bits : {8, 16, 32}) {
    for (int sw : {32, 64, 128}) {
      int64_t cols = sw * 8 / bits;
      Atom a = tma_copy(true, 64, cols, bits, sw);
      int b = sw == 128 ? 3 : sw == 64 ? 2 : 1;
      int64_t mask = (1 << b) - 1;
      for (int64_t e = 0; e < 64 * cols; ++e) {
        int64_t byte = e * bits / 8;
        int64_t hw = byte ^ (((byte >> 7) & mask) << 4);
        ASSERT_EQ(a.swizzle(e) * bits / 8, hw) << a.name << " element " << e;
      }
      // One thread moves the whole box, row after row.
      EXPECT_EQ(a.group_threads, 1);
      expect_bijection(*a.src);
      auto [r, c] = rc(*a.src, 0, cols + 1);
      EXPECT_EQ(r, 1);
      EXPECT_EQ(c, 1);
    }
  }
  EXPECT_TRUE(tma_copy(true, 8, 64, 16, 0).swizzle.is_identity());
}

TEST(Tma, BoxRulesAreUserErrors) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] {
              tma_copy(true, 64, 128, 16, 128);
            }).find("the inner box is 256 bytes, more than the 128-byte swizzle span"),
            std::string::npos);
  EXPECT_NE(message([] { tma_copy(true, 257, 64, 16, 0); }).find("box extents are 1..256"),
            std::string::npos);
  EXPECT_NE(message([] { tma_copy(true, 8, 4, 16, 0); }).find("multiple of 16 bytes"),
            std::string::npos);
  EXPECT_NE(message([] { tma_copy(true, 8, 64, 16, 48); }).find("swizzle is 0, 32, 64 or 128"),
            std::string::npos);
}

TEST(Shuffle, ButterflyStepsAndBroadcastResult) {
  Atom a = warp_shuffle_reduce(32);
  EXPECT_EQ(a.name, "shfl.bfly.x5.b32");
  EXPECT_EQ(a.cost.issue_cycles, 5);
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(a.src->index(l, 0), l);
    EXPECT_EQ(a.dst->index(l, 0), 0);
  }
  EXPECT_THROW(warp_shuffle_reduce(6), UserError);
}

TEST(Target, Sm80HasNoHopperAtomsAndSm90aHasThem) {
  Target sm80 = Target::sm80(), sm90 = Target::sm90a();
  auto names = [](const std::vector<Atom>& atoms) {
    std::set<std::string> out;
    for (const Atom& a : atoms) out.insert(a.name);
    return out;
  };
  auto n80 = names(sm80.all_atoms()), n90 = names(sm90.all_atoms());
  EXPECT_TRUE(n80.count("mma.sync.m16n8k16.f32.f16"));
  EXPECT_TRUE(n80.count("ldmatrix.x4.trans.b16"));
  EXPECT_TRUE(n80.count("cp.async.cg.shared.global.b128"));
  EXPECT_FALSE(n80.count("stmatrix.x4.b16"));
  for (const std::string& n : n80) {
    EXPECT_EQ(n.find("wgmma"), std::string::npos) << n;
    EXPECT_EQ(n.find("tma"), std::string::npos) << n;
  }
  EXPECT_TRUE(n90.count("wgmma.m64n256k16.f32.f16.ss"));
  EXPECT_TRUE(n90.count("wgmma.m64n256k32.f32.f8e4m3.rs"));
  EXPECT_TRUE(n90.count("tma.load.2d.box64x64.sw128"));
  EXPECT_TRUE(n90.count("stmatrix.x4.b16"));
  // 32 N values x 2 A sources + mma.sync for f16.
  EXPECT_EQ(sm90.mma_atoms(ScalarKind::f16, ScalarKind::f32).size(), 65u);
  EXPECT_EQ(sm80.mma_atoms(ScalarKind::f16, ScalarKind::f32).size(), 1u);
  EXPECT_TRUE(sm80.mma_atoms(ScalarKind::f8e4m3, ScalarKind::f32).empty());
  EXPECT_EQ(Target::named("sm_90a").sm(), 90);
  EXPECT_THROW(Target::named("sm_70"), UserError);
  // Every atom's layouts are well-formed and print.
  for (const Atom& a : sm90.all_atoms()) EXPECT_FALSE(a.str().empty());
}

}  // namespace
}  // namespace tessel::target::cuda
