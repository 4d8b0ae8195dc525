// The task compiler over many mappings of one program (issue 13): changing only the mapping —
// tile sizes, warpgroups, K step, pipeline depth, warp specialization — changes the generated
// kernel as the mapping says and never its results (the tile interpreter on the compiled kernel
// against the task interpreter, on ragged shapes).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "frontend/task/dependence_analysis.h"
#include "ir/parser.h"
#include "pipeline/pipeline.h"
#include "target/cuda/emit.h"
#include "tasks/programs.h"
#include "transforms/task/task_check.h"
#include "transforms/task/task_pipeline.h"

namespace tessel::transforms {
namespace {

struct GemmMapping {
  int64_t U, V, W, WGS, pipeline;
  bool warp_specialize;
  std::string name() const {
    std::ostringstream s;
    s << U << "x" << V << "x" << W << "_wg" << WGS << "_p" << pipeline
      << (warp_specialize ? "_ws" : "_nows");
    return s.str();
  }
  std::string text() const {
    std::ostringstream s;
    s << "instance gemm_grid { variant = gemm_grid proc = grid mems = [global, global, global]\n"
      << "  tunables = {U = " << U << ", V = " << V
      << "} entrypoint = true calls = [gemm_block] }\n"
      << "instance gemm_block { variant = gemm_block proc = block mems = [global, global, global]\n"
      << "  tunables = {W = " << W << "} calls = [clear_acc, gemm_tile, store_c]\n"
      << "  warp_specialize = " << (warp_specialize ? "true" : "false")
      << " pipeline = " << pipeline << " }\n"
      << "instance clear_acc { variant = clear_leaf proc = block mems = [register] }\n"
      << "instance gemm_tile { variant = gemm_tile proc = block mems = [register, shared, shared]\n"
      << "  tunables = {WGS = " << WGS << "} calls = [gemm_warpgroup] }\n"
      << "instance gemm_warpgroup { variant = mma_leaf proc = warpgroup mems = [register, shared, "
         "shared] }\n"
      << "instance store_c { variant = store_leaf proc = block mems = [global, register] }\n";
    return s.str();
  }
};

const std::vector<GemmMapping> kMappings = {
    {128, 256, 64, 2, 4, true},   {128, 256, 64, 2, 3, false}, {128, 128, 64, 2, 4, true},
    {128, 128, 64, 1, 2, true},   {64, 128, 64, 1, 4, true},   {64, 64, 64, 1, 2, false},
    {128, 64, 128, 2, 3, true},   {256, 128, 64, 2, 2, true},  {64, 256, 64, 1, 3, false},
    {128, 256, 128, 2, 2, false}, {64, 128, 128, 1, 2, true},  {128, 256, 64, 2, 1, true},
};

class TaskGemmMappings : public ::testing::TestWithParam<GemmMapping> {};

TEST_P(TaskGemmMappings, KernelFollowsTheMappingAndResultsDoNot) {
  const GemmMapping& g = GetParam();
  task::TaskProgram program = examples::gemm_tasks(ScalarKind::f16);
  task::Mapping mapping = task::parse_mapping(g.text(), g.name());
  task::Instantiation inst = task::instantiate(program, mapping);
  TileKernel kernel = compile_task_program(inst);
  std::string text = kernel.text();
  auto has = [&](const std::string& s) { return text.find(s) != std::string::npos; };
  auto shape = [](int64_t a, int64_t b) {
    return "shape = [" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  EXPECT_TRUE(has(shape(g.U, g.W))) << text;
  EXPECT_TRUE(has(shape(g.V, g.W))) << text;
  EXPECT_TRUE(has(shape(g.U, g.V))) << text;
  EXPECT_TRUE(has("threads = " + std::to_string(128 * g.WGS))) << text;
  EXPECT_TRUE(has("tiling = [" + std::to_string(g.WGS) + ",1]")) << text;
  EXPECT_TRUE(has("stages = " + std::to_string(g.pipeline))) << text;
  EXPECT_TRUE(has(std::string("warp_specialize = ") + (g.warp_specialize ? "true" : "false")))
      << text;

  // Results: ragged in M, N and K (K a multiple of 8, the TMA fact, but not of the K step).
  for (auto sizes : std::vector<std::map<std::string, int64_t>>{{{"M", 150}, {"N", 300}, {"K", 88}},
                                                                {{"M", 7}, {"N", 9}, {"K", 8}}}) {
    TaskCheckResult r = check_against_task_interpreter(inst, kernel, sizes, 3);
    EXPECT_LT(r.max_error, 1e-2 * std::max(1.0, r.max_reference)) << r.worst;
    EXPECT_GT(r.elements, 0);
  }

  // The tile pipeline takes it to CUDA for sm_90a with the roles the mapping asked for.
  ir::Module& module = kernel.module();
  pipeline::lower(module);
  target::cuda::EmittedKernel cuda = target::cuda::emit_cuda(*module.kernels.at(0));
  int64_t consumers = 128 * g.WGS;
  EXPECT_EQ(cuda.threads, g.warp_specialize ? consumers + 128 : consumers) << g.name();
  EXPECT_EQ(cuda.source.find("wgmma") != std::string::npos, true);
}

INSTANTIATE_TEST_SUITE_P(Gemm, TaskGemmMappings, ::testing::ValuesIn(kMappings),
                         [](const auto& info) { return info.param.name(); });

// The shared memory a kernel reserves grows with the pipeline depth the mapping gives.
TEST(TaskGemm, PipelineDepthChangesTheRing) {
  std::vector<int> bytes;
  for (int64_t depth : {2, 4}) {
    GemmMapping g{128, 256, 64, 2, depth, true};
    task::TaskProgram program = examples::gemm_tasks(ScalarKind::f16);
    task::Mapping mapping = task::parse_mapping(g.text(), g.name());
    task::Instantiation inst = task::instantiate(program, mapping);
    TileKernel kernel = compile_task_program(inst);
    pipeline::lower(kernel.module());
    bytes.push_back(target::cuda::emit_cuda(*kernel.module().kernels.at(0)).dynamic_shared_bytes);
  }
  EXPECT_GT(bytes[1], bytes[0]);
}

// The event IR after dependence analysis has the copy-in / copy-out of every launch; copy
// elimination leaves only the loads into shared memory.
TEST(TaskGemm, CopyEliminationLeavesTheSharedLoads) {
  task::TaskProgram program = examples::gemm_tasks(ScalarKind::f16);
  const auto* e = examples::find_task_example("gemm");
  task::Mapping mapping = task::parse_mapping(e->mapping_text, e->mapping_file);
  task::Instantiation inst = task::instantiate(program, mapping);
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  std::string before = task::analyze_dependences(inst).print();
  std::string after = compile_task_events(inst).print();
  EXPECT_GT(count(before, " = copy "), 8) << before;
  EXPECT_EQ(count(after, " = copy "), 2) << after;
  EXPECT_EQ(count(after, "shared"), 2) << after;
}

}  // namespace
}  // namespace tessel::transforms

namespace tessel::transforms {
namespace {

// The dual GEMM under its default mapping and two others: the A tile loaded once, the results the
// task interpreter's, and the tile pipeline takes each to CUDA.
TEST(TaskDualGemm, MappingsAgreeWithTheInterpreter) {
  const auto* e = examples::find_task_example("dual_gemm");
  ASSERT_NE(e, nullptr);
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  std::string small =
      replace(replace(replace(replace(e->mapping_text, "U = 128, V = 128", "U = 64, V = 128"),
                              "WGS = 2", "WGS = 1"),
                      "warp_specialize = true", "warp_specialize = false"),
              "pipeline = 4", "pipeline = 2");
  std::string wide = replace(e->mapping_text, "W = 64", "W = 128");
  wide = replace(wide, "pipeline = 4", "pipeline = 2");
  for (const std::string& text : {e->mapping_text, small, wide}) {
    task::TaskProgram program = examples::dual_gemm_tasks(ScalarKind::f16);
    task::Mapping mapping = task::parse_mapping(text, "dual_gemm.tmap");
    task::Instantiation inst = task::instantiate(program, mapping);
    TileKernel kernel = compile_task_program(inst);
    std::string tile = kernel.text();
    size_t first = tile.find("copy %A_tile");
    EXPECT_NE(first, std::string::npos) << tile;
    EXPECT_EQ(tile.find("copy %A_tile", first + 1), std::string::npos) << tile;
    TaskCheckResult r =
        check_against_task_interpreter(inst, kernel, {{"M", 150}, {"N", 200}, {"K", 88}}, 5);
    EXPECT_LT(r.max_error, 1e-2 * std::max(1.0, r.max_reference)) << r.worst;
    pipeline::lower(kernel.module());
    EXPECT_NO_THROW(target::cuda::emit_cuda(*kernel.module().kernels.at(0)));
  }
}

}  // namespace
}  // namespace tessel::transforms

namespace tessel::transforms {
namespace {

// FlashAttention-2 as a task program under several mappings: key tile W, pipeline depth (0: not
// pinned), warp specialization (-1: not pinned), the mmas on the block or split by rows over two
// warpgroups; the causal program, and the grid's tile order (raster group, 0: not given; the
// dimension taken from both ends in turns, -1: none). The kernel follows the mapping; the results
// are the task interpreter's on ragged sequence lengths (odd and even query tile counts, an odd
// number of heads: the alternation is a permutation of either).
struct AttentionMapping {
  int64_t W, pipeline;
  int warp_specialize;
  bool warpgroups;
  bool causal = false;
  int64_t raster_group = 0;
  int alternate_ends = -1;
  std::string name() const {
    std::ostringstream s;
    s << "W" << W << "_p" << pipeline << "_ws"
      << (warp_specialize < 0 ? "x" : std::to_string(warp_specialize))
      << (warpgroups ? "_wg2" : "_block") << (causal ? "_causal" : "");
    if (raster_group > 0) s << "_raster" << raster_group;
    if (alternate_ends >= 0) s << "_alternate" << alternate_ends;
    return s.str();
  }
  std::string text() const {
    std::ostringstream s;
    s << "instance attn_grid { variant = attn_grid proc = grid mems = [global, global, global, "
         "global]\n  tunables = {U = 128} entrypoint = true calls = [attn_block]";
    if (raster_group > 0 || alternate_ends >= 0) {
      s << "\n  order = {";
      if (raster_group > 0) s << "raster_group = " << raster_group;
      if (raster_group > 0 && alternate_ends >= 0) s << ", ";
      if (alternate_ends >= 0) s << "alternate_ends = " << alternate_ends;
      s << "}";
    }
    s << " }\n"
      << "instance attn_block { variant = attn_block proc = block mems = [global, global, global, "
         "global]\n  tunables = {W = "
      << W << "} calls = [init_max, clear, scores, " << (causal ? "mask_causal" : "mask_keys")
      << ", softmax, pv, normalize]\n";
    if (warp_specialize >= 0) s << "  warp_specialize = " << (warp_specialize ? "true" : "false");
    if (pipeline > 0) s << " pipeline = " << pipeline;
    s << " }\n"
      << "instance init_max { variant = init_max_leaf proc = block mems = [register] }\n"
      << "instance clear { variant = clear_leaf proc = block mems = [register] }\n";
    if (causal) {
      s << "instance mask_causal { variant = causal_leaf proc = block mems = [register, global, "
           "global] }\n";
    } else {
      s << "instance mask_keys { variant = mask_leaf proc = block mems = [register, global] }\n";
    }
    s
      << "instance softmax { variant = softmax_leaf proc = block mems = [register, register, "
         "register, register, register, register, register] }\n"
      << "instance normalize { variant = normalize_leaf proc = block mems = [global, register, "
         "register] }\n";
    if (warpgroups) {
      s << "instance scores { variant = scores_rows proc = block mems = [register, shared, shared] "
           "tunables = {WGS = 2} calls = [scores_wg] }\n"
        << "instance scores_wg { variant = scores_leaf proc = warpgroup mems = [register, shared, "
           "shared] }\n"
        << "instance pv { variant = pv_rows proc = block mems = [register, register, shared] "
           "tunables = {WGS = 2} calls = [pv_wg] }\n"
        << "instance pv_wg { variant = pv_leaf proc = warpgroup mems = [register, register, "
           "shared] }\n";
    } else {
      s << "instance scores { variant = scores_leaf proc = block mems = [register, shared, shared] "
           "}\n"
        << "instance pv { variant = pv_leaf proc = block mems = [register, register, shared] }\n";
    }
    return s.str();
  }
};

const std::vector<AttentionMapping> kAttentionMappings = {
    {128, 0, -1, false},
    {128, 2, 1, true},
    {64, 4, 1, true},
    {64, 2, 1, false},
    {128, 2, 0, true},
    {64, 0, 0, false},
    // The tile order: the causal example's, each half of it, the heads alternated, and an order
    // on the non-causal program (where every tile has the same work).
    {128, 0, -1, false, true, 4, 1},
    {128, 2, 1, true, true, 4, 1},
    {64, 0, -1, false, true, 0, 1},
    {128, 0, -1, false, true, 2, -1},
    {128, 0, 0, false, true, 3, 0},
    {128, 2, 1, true, false, 4, 1},
};

class TaskAttentionMappings : public ::testing::TestWithParam<AttentionMapping> {};

TEST_P(TaskAttentionMappings, KernelFollowsTheMappingAndResultsDoNot) {
  const AttentionMapping& g = GetParam();
  task::TaskProgram program = g.causal ? examples::attention_causal_tasks(ScalarKind::f16)
                                       : examples::attention_tasks(ScalarKind::f16);
  task::Mapping mapping = task::parse_mapping(g.text(), g.name());
  task::Instantiation inst = task::instantiate(program, mapping);
  TileKernel kernel = compile_task_program(inst);
  std::string text = kernel.text();
  auto has = [&](const std::string& s) { return text.find(s) != std::string::npos; };
  EXPECT_TRUE(has("shape = [1," + std::to_string(g.W) + ",128]")) << text;
  EXPECT_EQ(has("stages = " + std::to_string(g.pipeline)), g.pipeline > 0) << text;
  EXPECT_EQ(has("tiling = [2,1]"), g.warpgroups) << text;
  EXPECT_EQ(has("threads = 256"), g.warpgroups) << text;
  if (g.warp_specialize >= 0) {
    EXPECT_TRUE(has(std::string("warp_specialize = ") + (g.warp_specialize ? "true" : "false")));
  }
  // The order: the raster group on the grid, the alternation of the dimension named (by = the
  // query tiles, bx = the heads), and nothing of either where the mapping gives none.
  EXPECT_EQ(has("raster_group = " + std::to_string(g.raster_group)), g.raster_group > 0) << text;
  EXPECT_EQ(has("%half = div %by, %c2"), g.alternate_ends == 1) << text;
  EXPECT_EQ(has("%half = div %bx, %c2"), g.alternate_ends == 0) << text;
  std::vector<std::map<std::string, int64_t>> shapes = {{{"BH", 2}, {"S", 300}},
                                                        {{"BH", 1}, {"S", 77}}};
  // Five query tiles, the last of 8 rows, and three heads: odd counts in both dimensions.
  if (g.raster_group > 0 || g.alternate_ends >= 0) shapes.push_back({{"BH", 3}, {"S", 520}});
  for (const auto& sizes : shapes) {
    TaskCheckResult r = check_against_task_interpreter(inst, kernel, sizes, 3);
    EXPECT_LT(r.max_error, 1e-3 * std::max(1.0, r.max_reference)) << r.worst;
    EXPECT_GT(r.elements, 0);
  }
  // Warp-specialized (or left to the tile pipeline, which specializes it): the producer warpgroup
  // and two consumers, P the register A operand of the second mma. Without warp specialization
  // (the FlashAttention-2 schedule): no roles, every warp computes, one thread loads K and V
  // ahead through a ring (lower-mainloops), the mmas synchronous; the lowered kernel gives the
  // task interpreter's results too.
  pipeline::lower(kernel.module());
  target::cuda::EmittedKernel cuda = target::cuda::emit_cuda(*kernel.module().kernels.at(0));
  EXPECT_NE(cuda.source.find("wgmma_rs<"), std::string::npos);
  if (g.warp_specialize != 0) {
    EXPECT_EQ(cuda.threads, 384) << g.name();
    return;
  }
  EXPECT_LE(cuda.threads, 256) << g.name();  // no producer warpgroup
  EXPECT_EQ(kernel.text().find("warp_group"), std::string::npos) << kernel.text();
  EXPECT_NE(kernel.text().find("mbarrier_arrive %ring_empty"), std::string::npos);
  TaskCheckResult r = check_against_task_interpreter(inst, kernel, shapes.front(), 3);
  EXPECT_LT(r.max_error, 1e-3 * std::max(1.0, r.max_reference)) << r.worst;
  EXPECT_GT(r.elements, 0);
}

INSTANTIATE_TEST_SUITE_P(Attention, TaskAttentionMappings, ::testing::ValuesIn(kAttentionMappings),
                         [](const auto& info) { return info.param.name(); });

// The default mapping and the one that spells out two consumer warpgroups, warp specialization
// and 2 stages give one CUDA kernel; the tile program examples/kernels/flash_attention.tir gives
// the task interpreter's results (its scale constant differs from the exact 1/sqrt(128)·log2(e)
// in the sixth digit).
TEST(TaskAttention, DefaultMappingIsTheTileProgramsKernel) {
  const auto* e = examples::find_task_example("flash_attention");
  task::TaskProgram program = examples::attention_tasks(ScalarKind::f16);
  auto cuda_of = [&](const std::string& text) {
    task::Mapping mapping = task::parse_mapping(text, "m.tmap");
    task::Instantiation inst = task::instantiate(program, mapping);
    TileKernel kernel = compile_task_program(inst);
    pipeline::lower(kernel.module());
    return target::cuda::emit_cuda(*kernel.module().kernels.at(0)).source;
  };
  EXPECT_EQ(cuda_of(e->mapping_text), cuda_of(AttentionMapping{128, 2, 1, true}.text()));

  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/flash_attention.tir");
  std::stringstream text;
  text << in.rdbuf();
  TileKernel tile(ir::parse_module(text.str(), "flash_attention.tir"));
  task::Mapping mapping = task::parse_mapping(e->mapping_text, e->mapping_file);
  task::Instantiation inst = task::instantiate(program, mapping);
  for (auto sizes : std::vector<std::map<std::string, int64_t>>{{{"BH", 2}, {"S", 300}},
                                                                {{"BH", 1}, {"S", 77}}}) {
    TaskCheckResult r = check_against_task_interpreter(inst, tile, sizes, 9);
    EXPECT_LT(r.max_error, 1e-3 * std::max(1.0, r.max_reference)) << r.worst;
  }
}

// The causal task program: its lowered kernel and the tile program flash_attention_causal.tir give
// the task interpreter's results; it compiles with the tile program's roles.
TEST(TaskAttention, CausalAgreesWithTheTileProgram) {
  const auto* e = examples::find_task_example("flash_attention_causal");
  ASSERT_NE(e, nullptr);
  task::TaskProgram program = examples::attention_causal_tasks(ScalarKind::f16);
  task::Mapping mapping = task::parse_mapping(e->mapping_text, e->mapping_file);
  task::Instantiation inst = task::instantiate(program, mapping);
  TileKernel kernel = compile_task_program(inst);
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/flash_attention_causal.tir");
  std::stringstream text;
  text << in.rdbuf();
  TileKernel tile(ir::parse_module(text.str(), "flash_attention_causal.tir"));
  for (auto sizes : std::vector<std::map<std::string, int64_t>>{{{"BH", 2}, {"S", 300}},
                                                                {{"BH", 1}, {"S", 77}}}) {
    for (const TileKernel* k : {&kernel, &tile}) {
      TaskCheckResult r = check_against_task_interpreter(inst, *k, sizes, 4);
      EXPECT_LT(r.max_error, 1e-3 * std::max(1.0, r.max_reference)) << r.worst;
    }
  }
  pipeline::lower(kernel.module());
  target::cuda::EmittedKernel cuda = target::cuda::emit_cuda(*kernel.module().kernels.at(0));
  EXPECT_EQ(cuda.threads, 384);
  EXPECT_NE(cuda.source.find("wgmma_rs<"), std::string::npos);
}

}  // namespace
}  // namespace tessel::transforms

namespace tessel::transforms {
namespace {

// lower-to-tile refuses a reduction over a dimension of extent 1 (the tile language has no such
// dimension: register tensors drop extents of 1), naming the leaf op.
TEST(LowerToTile, ReductionOverAnExtentOfOne) {
  task::TaskProgram p("red");
  p.global("X", ScalarKind::f32, {"M", "1"});
  p.global("y", ScalarKind::f32, {"M", "1"});
  p.task("t", {{"y", task::Privilege::read_write}, {"X", task::Privilege::read}});
  p.leaf("t", "t_leaf", [](task::Leaf& b) { b.reduce_max(b.param("y"), b.param("X"), 1); });
  p.inner("t", "t_grid", [](task::Inner& b) {
    auto [y, X] = b.params<2>();
    auto yp = b.blocks(y, {64, 1}), Xp = b.blocks(X, {64, 1});
    b.prange({"i"}, {task::cdiv(y.dim(0), 64)}, [&](const task::Indices& i) {
      b.launch("t", {yp({i[0], 0}), Xp({i[0], 0})});
    });
  });
  p.entry("t", {"y", "X"});
  task::Mapping m = task::parse_mapping(
      "instance g { variant = t_grid proc = grid mems = [global, global] entrypoint = true "
      "calls = [l] }\ninstance l { variant = t_leaf proc = block mems = [register, register] }\n",
      "red.tmap");
  task::Instantiation inst = task::instantiate(p, m);
  std::string msg;
  try {
    compile_task_program(inst);
  } catch (const UserError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("lower-to-tile: reduce_max over a dimension of extent 1"), std::string::npos)
      << msg;
}

}  // namespace
}  // namespace tessel::transforms
