// The tuning cache and the checks of KernelVariants (src/compile/variants.h); no GPU: choosing and
// tuning need one and run on the device (tessel tune, tessel bench gemm a.tir+b.tir).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compile/attention_cost.h"
#include "compile/gemm_cost.h"
#include "compile/variants.h"
#include "ir/parser.h"
#include "swapped_gemm_text.h"
#include "tessel/example_kernels.h"
#include "transforms/async/stage_budget.h"

namespace tessel {
namespace {

std::string fresh_directory(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tessel-variants-test-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(TuningCache, RemembersTheLastChoicePerDeviceAndShape) {
  TuningCache cache(fresh_directory("remember"));
  EXPECT_FALSE(cache.lookup("fam", "H100/132", "M=16,N=4096,K=4096"));
  ASSERT_TRUE(cache.store("fam", "H100/132", "M=16,N=4096,K=4096", "gemm_split_k", 0.05));
  ASSERT_TRUE(cache.store("fam", "H100/132", "M=4096,N=4096,K=4096", "gemm", 0.18));
  ASSERT_TRUE(cache.store("fam", "H200/132", "M=16,N=4096,K=4096", "gemm_t128", 0.04));
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=16,N=4096,K=4096"), "gemm_split_k");
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=4096,N=4096,K=4096"), "gemm");
  EXPECT_EQ(cache.lookup("fam", "H200/132", "M=16,N=4096,K=4096"), "gemm_t128");
  EXPECT_FALSE(cache.lookup("other", "H100/132", "M=16,N=4096,K=4096"));
  // A new measurement replaces the old one (one line per device and shape).
  ASSERT_TRUE(cache.store("fam", "H100/132", "M=16,N=4096,K=4096", "gemm_t128", 0.04));
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=16,N=4096,K=4096"), "gemm_t128");
  std::ifstream in(cache.directory() + "/fam.tsv");
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 3);
}

TEST(TuningCache, IgnoresLinesThatDoNotParse) {
  TuningCache cache(fresh_directory("corrupt"));
  std::filesystem::create_directories(cache.directory());
  std::ofstream(cache.directory() + "/fam.tsv") << "garbage\nH100\tM=1\n\t\t\t\n"
                                                << "H100/132\tM=1,N=1,K=8\tgemm\t0.01\n";
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=1,N=1,K=8"), "gemm");
  EXPECT_FALSE(cache.lookup("fam", "H100", "M=1"));
}

CompiledKernel compiled(const std::string& name) {
  auto module = ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
  CompileOptions options;
  options.compile_cubin = false;
  return compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
}

TEST(KernelVariants, TakeKernelsOfTheSameArgumentsUnderDistinctNames) {
  std::vector<CompiledKernel> two = {compiled("gemm"), compiled("gemm_nn")};
  KernelVariants ok(two, {"gemm", "gemm_nn"}, TuningCache(fresh_directory("ok")));
  EXPECT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok.family().rfind("gemm-", 0), 0u) << ok.family();
  // The family names the variants: another set (or order) is another family.
  KernelVariants swapped({compiled("gemm_nn"), compiled("gemm")}, {"gemm_nn", "gemm"},
                         TuningCache(fresh_directory("swapped")));
  EXPECT_NE(swapped.family(), ok.family());
  // The arguments' shape class is the bound sizes.
  std::vector<KernelArg> args = {TensorArg{0x1000, {16, 64}, ir::ScalarKind::f16},
                                 TensorArg{0x2000, {32, 64}, ir::ScalarKind::f16},
                                 TensorArg{0x3000, {16, 32}, ir::ScalarKind::f16}};
  EXPECT_EQ(ok.shape_class(args), "K=64,M=16,N=32");
  try {
    KernelVariants same(two, {"gemm", "gemm"}, TuningCache(fresh_directory("same")));
    ADD_FAILURE() << "two variants of one name accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("two variants are named gemm"), std::string::npos)
        << e.what();
  }
  try {
    KernelVariants none({}, {}, TuningCache(fresh_directory("none")));
    ADD_FAILURE() << "no variants accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel variants: none given"), std::string::npos)
        << e.what();
  }
  try {
    KernelVariants names(two, {"gemm"}, TuningCache(fresh_directory("names")));
    ADD_FAILURE() << "fewer names than variants accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("2 kernels but 1 names"), std::string::npos) << e.what();
  }
  try {
    KernelVariants other({compiled("gemm"), compiled("gemm_bias_relu")}, {},
                         TuningCache(fresh_directory("other")));
    ADD_FAILURE() << "variants of other arguments accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("takes other arguments than @gemm"), std::string::npos)
        << e.what();
  }
}

// An example kernel with `from` replaced by `to` (a pin added, as the variant files add them).
std::unique_ptr<ir::Module> edited(const std::string& name, const std::string& from,
                                   const std::string& to) {
  std::string text = examples::lowered_kernels().at(name);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return ir::parse_module(text, name + ".tir");
}

// Variants written as the bench's files are (bench/kernel-variants/): the example's text with
// another tile and a split pin.
std::unique_ptr<ir::Module> variant(int64_t rows, int64_t cols, bool split, int64_t stages = 0) {
  std::string text = examples::lowered_kernels().at("gemm");
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  const std::string r = std::to_string(rows), c = std::to_string(cols);
  replace_all("%c128 = const {value = 128}", "%c128 = const {value = " + r + "}");
  replace_all("%c256 = const {value = 256}", "%c256 = const {value = " + c + "}");
  replace_all("[128,256]", "[" + r + "," + c + "]");
  replace_all("[128,64]", "[" + r + ",64]");
  replace_all("[256,64]", "[" + c + ",64]");
  replace_all("[64,256]", "[64," + c + "]");
  if (split) {
    replace_all("block_grid %tiles_m, %tiles_n :",
                "block_grid %tiles_m, %tiles_n {split_k = auto} :");
  }
  if (stages > 0) {
    replace_all("iter(%c = %zero) :",
                "iter(%c = %zero) {stages = " + std::to_string(stages) + "} :");
  }
  return ir::parse_module(text, "variant.tir");
}

// A swapped-operand variant (Cᵀ = B·Aᵀ with `rows` of B as the wgmma's M and `tokens` of A as
// its N), as bench/kernel-variants/make_swap_variants.py writes them.
std::unique_ptr<ir::Module> swapped(int64_t rows, int64_t tokens, bool split, int64_t stages = 0) {
  std::string text = test_support::swapped_gemm_text(
      static_cast<int>(rows), static_cast<int>(tokens), false, split ? "split_k = auto" : "");
  const std::string loop = "iter(%c = %zero) :";
  if (stages > 0) {
    text.replace(text.find(loop), loop.size(),
                 "iter(%c = %zero) {stages = " + std::to_string(stages) + "} :");
  }
  return ir::parse_module(text, "swap.tir");
}

TEST(GemmCost, ReadsTheTileTheSplitAndTheSizesOfAGemm) {
  auto gemm = ir::parse_module(examples::lowered_kernels().at("gemm"), "gemm.tir");
  std::optional<GemmTraits> t = gemm_traits(*gemm->kernels.front());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->tile_m, 128);
  EXPECT_EQ(t->tile_n, 256);
  EXPECT_EQ(t->tile_k, 64);
  EXPECT_FALSE(t->split_k);
  EXPECT_EQ(t->m + t->n + t->k, "MNK");
  auto nn = ir::parse_module(examples::lowered_kernels().at("gemm_nn"), "gemm_nn.tir");
  ASSERT_TRUE(gemm_traits(*nn->kernels.front()));
  EXPECT_EQ(gemm_traits(*nn->kernels.front())->k, "K");
  auto split = variant(64, 128, true);
  std::optional<GemmTraits> s = gemm_traits(*split->kernels.front());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->tile_m, 64);
  EXPECT_EQ(s->tile_n, 128);
  EXPECT_TRUE(s->split_k);
  EXPECT_EQ(s->parts, 0);
  // Swapped operands: the output tile is [tokens, rows] of C [M,N]; the wgmma's M is the rows.
  auto swap = swapped(128, 16, true);
  std::optional<GemmTraits> w = gemm_traits(*swap->kernels.front());
  ASSERT_TRUE(w);
  EXPECT_EQ(w->tile_m, 16);
  EXPECT_EQ(w->tile_n, 128);
  EXPECT_EQ(w->mma_rows, 128);
  EXPECT_EQ(w->m + w->n + w->k, "MNK");
  EXPECT_TRUE(w->split_k);
  // Nothing pinned, both operands' rows along K, no cluster.
  EXPECT_EQ(t->stages, 0);
  EXPECT_EQ(t->element_bytes, 2);
  EXPECT_EQ(t->a_row + t->b_row, "KK");
  EXPECT_EQ(t->cluster_m, 1);
  EXPECT_EQ(t->cluster_n, 1);
  EXPECT_EQ(gemm_traits(*nn->kernels.front())->b_row, "N");
  auto tn = ir::parse_module(examples::lowered_kernels().at("gemm_tn"), "gemm_tn.tir");
  ASSERT_TRUE(gemm_traits(*tn->kernels.front()));
  EXPECT_EQ(gemm_traits(*tn->kernels.front())->a_row + gemm_traits(*tn->kernels.front())->b_row,
            "MN");
  auto e4m3 = ir::parse_module(examples::lowered_kernels().at("gemm_e4m3"), "gemm_e4m3.tir");
  ASSERT_TRUE(gemm_traits(*e4m3->kernels.front()));
  EXPECT_EQ(gemm_traits(*e4m3->kernels.front())->element_bytes, 1);
  // A pinned ring depth; a 2x1 cluster: its blocks share B's tile (their M tiles differ).
  auto deep = edited("gemm", "iter(%c = %zero) :", "iter(%c = %zero) {stages = 6} :");
  EXPECT_EQ(gemm_traits(*deep->kernels.front())->stages, 6);
  auto cluster = edited("gemm_tn", "block_grid %tiles_m, %tiles_n :",
                        "block_grid %tiles_m, %tiles_n {cluster = [2,1]} :");
  std::optional<GemmTraits> c = gemm_traits(*cluster->kernels.front());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->cluster_m, 2);
  EXPECT_EQ(c->cluster_n, 1);
  // Swapped operands put N first in the grid: their 2x1 cluster shares A's tile.
  auto swap_cluster = ir::parse_module(
      test_support::swapped_gemm_text(64, 64, false, "cluster = [2,1]"), "swap.tir");
  std::optional<GemmTraits> sc = gemm_traits(*swap_cluster->kernels.front());
  ASSERT_TRUE(sc);
  EXPECT_EQ(sc->cluster_m, 1);
  EXPECT_EQ(sc->cluster_n, 2);
  // Two mmas (the dual GEMM): not a GEMM the model knows.
  auto dual = ir::parse_module(examples::lowered_kernels().at("dual_gemm"), "dual_gemm.tir");
  EXPECT_FALSE(gemm_traits(*dual->kernels.front()));
}

// The ring an unpinned loop gets: as many slots of A's and B's tiles as the shared memory holds,
// at most kMaxStages (pipeline-loops, pipeline-arefs); a pin as it is.
TEST(GemmCost, RingDepthIsThePinElseWhatFitsUpToTheCap) {
  auto gemm = ir::parse_module(examples::lowered_kernels().at("gemm"), "gemm.tir");
  EXPECT_EQ(gemm_ring_depth(*gemm_traits(*gemm->kernels.front())), 4);  // 48 KiB slots
  auto m64 = variant(64, 128, false);
  EXPECT_EQ(gemm_ring_depth(*gemm_traits(*m64->kernels.front())), transforms::kMaxStages);
  auto deep = edited("gemm", "iter(%c = %zero) :", "iter(%c = %zero) {stages = 3} :");
  EXPECT_EQ(gemm_ring_depth(*gemm_traits(*deep->kernels.front())), 3);
}

// The choices the H100 sweep measured (bench/results/2026-11-26-gemm-sweep-tuned2-h100.md): the
// example at large shapes, a 64x128 split at decode shapes with long K, 64x128 tiles at 1024^3.
TEST(GemmCost, PicksWhatTheSweepMeasuredFastest) {
  auto base = ir::parse_module(examples::lowered_kernels().at("gemm"), "gemm.tir");
  auto t128 = variant(128, 128, false);
  auto m64 = variant(64, 128, false);
  auto m64_split = variant(64, 128, true);
  std::vector<GemmTraits> all = {
      *gemm_traits(*base->kernels.front()), *gemm_traits(*t128->kernels.front()),
      *gemm_traits(*m64->kernels.front()), *gemm_traits(*m64_split->kernels.front())};
  auto pick = [&](int64_t m, int64_t n, int64_t k) {
    std::map<std::string, int64_t> sizes = {{"M", m}, {"N", n}, {"K", k}};
    size_t best = 0;
    for (size_t i = 1; i < all.size(); ++i) {
      if (gemm_cost(all[i], sizes, 132) < gemm_cost(all[best], sizes, 132)) best = i;
    }
    return best;
  };
  EXPECT_EQ(pick(4096, 4096, 4096), 0u);
  EXPECT_EQ(pick(8192, 8192, 8192), 0u);
  EXPECT_EQ(pick(16, 4096, 11008), 3u);
  EXPECT_EQ(pick(64, 4096, 14336), 3u);
  EXPECT_EQ(pick(1024, 1024, 1024), 2u);
  // With a swapped 64x16 split variant in the family, its ring pinned to 12 slots as the swept
  // ones (bench/results/2026-11-26-gemm-swap-h100.md): it at 16 tokens, where it measured 1.0x
  // cuBLAS against 0.63x for the 64x128 split; not at 256 tokens or at the large shapes.
  auto swap = swapped(64, 16, true, 12);
  all.push_back(*gemm_traits(*swap->kernels.front()));
  EXPECT_EQ(pick(16, 4096, 4096), 4u);
  EXPECT_EQ(pick(16, 4096, 11008), 4u);
  EXPECT_NE(pick(256, 4096, 4096), 4u);
  EXPECT_EQ(pick(4096, 4096, 4096), 0u);
}

// What the H100 and H200 sweeps measured that the model fitted on 2026-11-26 missed
// (bench/results/2026-11-28-gemm-cost-refit-h200.md).
TEST(GemmCost, SeesRingDepthSplitReductionAndMisalignedRows) {
  auto cost = [](const std::unique_ptr<ir::Module>& v, int64_t m, int64_t n, int64_t k) {
    return gemm_cost(*gemm_traits(*v->kernels.front()), {{"M", m}, {"N", n}, {"K", k}}, 132);
  };
  // Ring depth: while unpinned rings had 4 slots, 64x64 tiles pinned to 8 measured 1.32-1.34x
  // faster at 64x4096x4096 (2026-11-27-gemm-sweep-roles-h100, -a-km-swap-h100).
  EXPECT_LT(cost(variant(64, 64, false, 8), 64, 4096, 4096),
            cost(variant(64, 64, false, 4), 64, 4096, 4096) / 1.1);
  // The split's reduction (its last part reads every partial tile): at 256x4096x11008 64x128
  // tiles without a split over the 128x128 split, 1.17x faster on the H200 (the model of
  // 2026-11-26 picked the split).
  EXPECT_LT(cost(variant(64, 128, false), 256, 4096, 11008),
            cost(variant(128, 128, true), 256, 4096, 11008));
  // 64x4096x11008: not the 64x128 split the old model picked (1.27x the fastest on the H200), but
  // 64x64 tiles split in two (1.08x).
  EXPECT_LT(cost(variant(64, 64, true, 8), 64, 4096, 11008),
            cost(variant(64, 128, true), 64, 4096, 11008));
  // Rows that are not whole 128-byte lines: at 3000x5000x704 with A [K,M] and B [K,N] (rows of
  // 6000 and 10000 bytes) the 2x1 cluster, which multicasts B's tile, measured 1.22-1.34x faster
  // than the plain tile; where the rows are whole lines it costs no less (it measured 1-29%
  // slower).
  auto tn = ir::parse_module(examples::lowered_kernels().at("gemm_tn"), "gemm_tn.tir");
  auto tn_cluster = edited("gemm_tn", "block_grid %tiles_m, %tiles_n :",
                           "block_grid %tiles_m, %tiles_n {cluster = [2,1]} :");
  EXPECT_LT(cost(tn_cluster, 3000, 5000, 704), cost(tn, 3000, 5000, 704));
  EXPECT_LE(cost(tn, 3072, 5120, 704), cost(tn_cluster, 3072, 5120, 704));
  EXPECT_LE(cost(tn, 4096, 4096, 4096), cost(tn_cluster, 4096, 4096, 4096));
  // A cluster's grid is whole clusters: at 16 tokens a 2x1 cluster of 128-row tiles has a second,
  // empty row of tiles, and its multicast saves nothing the model counts there (1.29x slower
  // measured with B [K,N]).
  EXPECT_LE(cost(tn, 16, 14336, 4096), cost(tn_cluster, 16, 14336, 4096));
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// The attention model (src/compile/attention_cost.h) reads the example and its ping-pong form
// (the example with the pins bench/kernel-variants/attention/flash_attention_g1pp.tir adds).
std::unique_ptr<ir::Module> attention_example(bool pingpong) {
  std::string text = examples::lowered_kernels().at("flash_attention");
  if (pingpong) {
    const std::string grid = "block_grid %BH, %tiles_q :";
    const size_t at = text.find(grid);
    EXPECT_NE(at, std::string::npos);
    text.replace(at, grid.size(), "block_grid %BH, %tiles_q {raster_group = 1, pingpong = true} :");
  }
  return ir::parse_module(text, "flash_attention.tir");
}

TEST(AttentionCost, ReadsTheKeyLoopAndThePingpongPin) {
  auto plain = attention_example(false), turns = attention_example(true);
  std::optional<AttentionTraits> a = attention_traits(*plain->kernels.front());
  std::optional<AttentionTraits> b = attention_traits(*turns->kernels.front());
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(a->pingpong);
  EXPECT_TRUE(b->pingpong);
  EXPECT_EQ(a->length, "S");
  EXPECT_EQ(a->key_tile, 128);
  // A GEMM has no key loop; the causal example's key tile count depends on the query tile
  // (min(all, i + 1)): neither has traits.
  auto gemm = ir::parse_module(examples::lowered_kernels().at("gemm"), "gemm.tir");
  EXPECT_FALSE(attention_traits(*gemm->kernels.front()));
  auto causal = ir::parse_module(examples::lowered_kernels().at("flash_attention_causal"),
                                 "flash_attention_causal.tir");
  EXPECT_FALSE(attention_traits(*causal->kernels.front()));
}

TEST(AttentionCost, PrefersTurnsUpToEightKeyTiles) {
  auto plain = attention_example(false), turns = attention_example(true);
  const std::vector<std::optional<AttentionTraits>> both = {
      attention_traits(*plain->kernels.front()), attention_traits(*turns->kernels.front())};
  auto at = [](int64_t s) { return std::map<std::string, int64_t>{{"BH", 128}, {"S", s}}; };
  EXPECT_EQ(attention_model_choice(both, at(1024)), 1u);  // 8 key tiles: the turns
  EXPECT_EQ(attention_model_choice(both, at(1000)), 1u);
  EXPECT_EQ(attention_model_choice(both, at(1025)), 0u);  // 9
  EXPECT_EQ(attention_model_choice(both, at(16384)), 0u);
  const std::vector<std::optional<AttentionTraits>> reversed = {both[1], both[0]};
  EXPECT_EQ(attention_model_choice(reversed, at(1024)), 0u);
  EXPECT_EQ(attention_model_choice(reversed, at(4096)), 1u);
  // A variant without traits, or a size not given: no model, the base.
  EXPECT_EQ(attention_model_choice({both[0], std::nullopt}, at(1024)), 0u);
  EXPECT_EQ(attention_model_choice(both, {{"BH", 128}}), 0u);
}

}  // namespace
}  // namespace tessel
