// The task language: the recorded program, the mapping's text form, instantiation and its errors,
// and the task interpreter against a direct computation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "frontend/task/instantiate.h"
#include "frontend/task/mapping.h"
#include "frontend/task/task_interpreter.h"
#include "tasks/programs.h"

namespace tessel::task {
namespace {

Mapping default_mapping() {
  const auto* e = examples::find_task_example("gemm");
  return parse_mapping(e->mapping_text, e->mapping_file);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TaskProgram, RecordsTheGemmVariants) {
  TaskProgram p = examples::gemm_tasks(ScalarKind::f16);
  ASSERT_NE(p.find_variant("gemm_block"), nullptr);
  const Variant& block = *p.find_variant("gemm_block");
  EXPECT_EQ(block.kind, VariantKind::inner);
  EXPECT_EQ(block.tunables, std::vector<std::string>{"W"});
  ASSERT_EQ(block.body.size(), 3u);  // clear, srange, store
  EXPECT_EQ(block.body[1].kind, Stmt::Kind::srange);
  EXPECT_EQ(p.find_variant("mma_leaf")->ops.at(0).kind, LeafOp::Kind::mma);
}

TEST(TaskProgram, LeafPrivilegesAreChecked) {
  TaskProgram p("bad");
  p.task("t", {{"X", Privilege::read}, {"Y", Privilege::write}});
  std::string msg = error_of([&] { p.leaf("t", "v", [](Leaf& b) { b.fill(b.param("X"), 0); }); });
  EXPECT_NE(msg.find("leaf 'v' writes 'X', which task 't' only reads"), std::string::npos) << msg;
  msg = error_of(
      [&] { p.leaf("t", "w", [](Leaf& b) { b.mma(b.param("Y"), b.param("X"), b.param("X")); }); });
  EXPECT_NE(msg.find("needs read-write or reduce privilege"), std::string::npos) << msg;
}

TEST(Mapping, ParsesAndPrintsBack) {
  Mapping m = default_mapping();
  ASSERT_EQ(m.instances.size(), 6u);
  const MappingInstance* block = m.find("gemm_block");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->proc.value, Processor::block);
  EXPECT_EQ(block->pipeline->value, 4);
  EXPECT_TRUE(block->warp_specialize->value);
  EXPECT_EQ(block->variant.loc.line, 12);
  Mapping again = parse_mapping(m.text(), "again");
  EXPECT_EQ(again.text(), m.text());
}

// The same mapping written in C++ prints as the text file says.
TEST(Mapping, TheCppFormIsTheTextForm) {
  using M = Memory;
  Mapping m;
  m.instances.push_back(instance("gemm_grid", "gemm_grid", Processor::grid,
                                 {M::global, M::global, M::global}, {{"U", 128}, {"V", 256}},
                                 {"gemm_block"}));
  m.instances.back().entrypoint = true;
  m.instances.push_back(instance("gemm_block", "gemm_block", Processor::block,
                                 {M::global, M::global, M::global}, {{"W", 64}},
                                 {"clear_acc", "gemm_tile", "store_c"}));
  m.instances.back().warp_specialize = Located<bool>{true, {}};
  m.instances.back().pipeline = Located<int64_t>{4, {}};
  m.instances.push_back(instance("clear_acc", "clear_leaf", Processor::block, {M::reg}));
  m.instances.push_back(instance("gemm_tile", "gemm_tile", Processor::block,
                                 {M::reg, M::shared, M::shared}, {{"WGS", 2}}, {"gemm_warpgroup"}));
  m.instances.push_back(
      instance("gemm_warpgroup", "mma_leaf", Processor::warpgroup, {M::reg, M::shared, M::shared}));
  m.instances.push_back(instance("store_c", "store_leaf", Processor::block, {M::global, M::reg}));
  EXPECT_EQ(m.text(), default_mapping().text());
  TaskProgram p = examples::gemm_tasks(ScalarKind::f16);
  EXPECT_NO_THROW(instantiate(p, m));
  // Without locations, errors still name the instance.
  m.instances[3].tunables[0].second.value = 3;
  std::string msg = error_of([&] { instantiate(p, m); });
  EXPECT_NE(msg.find("instance 'gemm_tile': the blocks partition at"), std::string::npos) << msg;
}

// The grid's tile order: parsed with locations, printed back, the same in C++; checked against
// the program's grid when instantiated, also without locations (the C++ form).
TEST(Mapping, TheTileOrder) {
  const auto* e = examples::find_task_example("flash_attention_causal");
  Mapping m = parse_mapping(e->mapping_text, e->mapping_file);
  const MappingInstance* grid = m.find("attn_grid");
  ASSERT_TRUE(grid && grid->order && grid->order->raster_group && grid->order->alternate_ends);
  EXPECT_EQ(grid->order->raster_group->value, 4);
  EXPECT_EQ(grid->order->alternate_ends->value, 1);
  EXPECT_GT(grid->order->alternate_ends->loc.line, grid->loc.line);
  EXPECT_NE(m.text().find("  order = {raster_group = 4, alternate_ends = 1}\n"), std::string::npos);
  EXPECT_EQ(parse_mapping(m.text(), "again").text(), m.text());

  Mapping cpp = m;
  for (MappingInstance& i : cpp.instances)
    if (i.name == "attn_grid") i.order = tile_order(4, 1);
  EXPECT_EQ(cpp.text(), m.text());
  TaskProgram p = examples::attention_causal_tasks(ScalarKind::f16);
  EXPECT_NO_THROW(instantiate(p, cpp));
  for (MappingInstance& i : cpp.instances)
    if (i.name == "attn_grid") i.order = tile_order(std::nullopt, 1);
  EXPECT_NE(cpp.text().find("  order = {alternate_ends = 1}\n"), std::string::npos);
  EXPECT_NO_THROW(instantiate(p, cpp));
  for (MappingInstance& i : cpp.instances)
    if (i.name == "attn_grid") i.order = tile_order(0);
  std::string msg = error_of([&] { instantiate(p, cpp); });
  EXPECT_NE(msg.find("instance 'attn_grid': raster_group must be at least 1 (blocks taken in "
                     "groups of that many along the grid's first dimension), not 0"),
            std::string::npos)
      << msg;
}

// A grid of one dimension has no second dimension to alternate, nor rows to group.
TEST(Instantiate, TileOrderOfAOneDimensionalGrid) {
  TaskProgram p("rows");
  p.global("C", ScalarKind::f32, {"M", "N"});
  p.task("top", {{"C", Privilege::write}});
  p.task("clear", {{"C", Privilege::write}});
  p.leaf("clear", "clear_leaf", [](Leaf& b) { b.fill(b.param("C"), 0); });
  p.inner("top", "top_grid", [](Inner& b) {
    auto C = b.param(0);
    auto Cp = b.blocks(C, {64, C.dim(1)});
    b.prange({"i"}, {cdiv(C.dim(0), 64)}, [&](const Indices& i) { b.launch("clear", {Cp({i[0], 0})}); });
  });
  p.entry("top", {"C"});
  auto mapping = [](const std::string& order) {
    return parse_mapping("instance top { variant = top_grid proc = grid mems = [global]\n"
                         "  entrypoint = true calls = [c] order = {" + order + "} }\n"
                         "instance c { variant = clear_leaf proc = block mems = [global] }\n",
                         "rows.tmap");
  };
  EXPECT_NO_THROW(instantiate(p, mapping("alternate_ends = 0")));
  std::string msg = error_of([&] { instantiate(p, mapping("raster_group = 2")); });
  EXPECT_NE(msg.find("rows.tmap:2:57: error: instance 'top': raster_group orders the blocks of a "
                     "2-D grid, but the prange at "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(" has 1 dimension (i)"), std::string::npos) << msg;
  msg = error_of([&] { instantiate(p, mapping("alternate_ends = 1")); });
  EXPECT_NE(msg.find("rows.tmap:2:59: error: instance 'top': alternate_ends names grid dimension "
                     "1, which does not exist: the prange at "),
            std::string::npos)
      << msg;
  msg = error_of([&] { instantiate(p, mapping("alternate_ends = -1")); });
  EXPECT_NE(msg.find("alternate_ends names grid dimension -1, which does not exist"),
            std::string::npos)
      << msg;
}

TEST(Mapping, SyntaxErrorsHaveLineAndColumn) {
  std::string msg =
      error_of([] { parse_mapping("instance a {\n  variant = v\n  proc = core\n}", "m"); });
  EXPECT_NE(msg.find("m:3:10: error: unknown processor level 'core'"), std::string::npos) << msg;
  msg = error_of([] { parse_mapping("instance a {\n  variant v\n}", "m"); });
  EXPECT_NE(msg.find("m:2:11: error: expected '=', got 'v'"), std::string::npos) << msg;
  msg = error_of([] { parse_mapping("instance a { variant = v mems = [shard] }", "m"); });
  EXPECT_NE(msg.find("m:1:34: error: unknown memory 'shard'"), std::string::npos) << msg;
}

// A program whose prange writes one tensor from every iteration.
TaskProgram aliasing_program() {
  TaskProgram p("aliasing");
  p.global("C", ScalarKind::f32, {"M", "N"});
  p.task("top", {{"C", Privilege::write}});
  p.task("clear", {{"C", Privilege::write}});
  p.leaf("clear", "clear_leaf", [](Leaf& b) { b.fill(b.param("C"), 0); });
  p.inner("top", "top_grid", [](Inner& b) {
    auto C = b.param(0);
    auto Cp = b.blocks(C, {b.tunable("U"), C.dim(1)});
    b.prange({"i", "j"}, {cdiv(C.dim(0), b.tunable("U")), b.tunable("J")}, [&](const Indices& ij) {
      b.launch("clear", {Cp({ij[0], 0})});
    });
  });
  p.entry("top", {"C"});
  return p;
}

TEST(Instantiate, AliasingWritesUnderPrange) {
  TaskProgram p = aliasing_program();
  Mapping m = parse_mapping(
      "instance top { variant = top_grid proc = grid mems = [global]\n"
      "  tunables = {U = 64, J = 2} entrypoint = true calls = [c] }\n"
      "instance c { variant = clear_leaf proc = block mems = [global] }\n",
      "alias.tmap");
  std::string msg = error_of([&] { instantiate(p, m); });
  EXPECT_NE(msg.find("alias.tmap:2:27: error: instance 'top': aliasing writes under the prange at"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("every j launches 'clear'"), std::string::npos) << msg;
  // With one iteration along j nothing aliases.
  Mapping ok = parse_mapping(
      "instance top { variant = top_grid proc = grid mems = [global]\n"
      "  tunables = {U = 64, J = 1} entrypoint = true calls = [c] }\n"
      "instance c { variant = clear_leaf proc = block mems = [global] }\n",
      "alias.tmap");
  EXPECT_NO_THROW(instantiate(p, ok));
}

TEST(Instantiate, NoEntrypoint) {
  TaskProgram p = examples::gemm_tasks(ScalarKind::f16);
  Mapping m = default_mapping();
  m.instances[0].entrypoint = false;
  std::string msg = error_of([&] { instantiate(p, m); });
  EXPECT_NE(msg.find("the mapping has no entrypoint"), std::string::npos) << msg;
}

// The task interpreter's GEMM against a direct float64 product with f16 inputs.
void check_gemm(const Mapping& m, int64_t M, int64_t N, int64_t K) {
  TaskProgram p = examples::gemm_tasks(ScalarKind::f16);
  Instantiation inst = instantiate(p, m);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::map<std::string, HostArray> data;
  auto make = [&](const std::string& name, int64_t r, int64_t c) {
    HostArray& a = data[name];
    a.element = ScalarKind::f16;
    a.shape = {r, c};
    for (int64_t i = 0; i < r * c; ++i) a.data.push_back(round_element(ScalarKind::f16, dist(rng)));
  };
  make("A", M, K);
  make("B", N, K);
  make("C", M, N);
  std::map<std::string, int64_t> sizes = {{"M", M}, {"N", N}, {"K", K}};
  HostArray A = data["A"], B = data["B"];
  interpret(inst, sizes, data);
  double worst = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += A.data[i * K + k] * B.data[j * K + k];
      worst = std::max(worst, std::abs(ref - data["C"].data[i * N + j]));
    }
  }
  EXPECT_LT(worst, 1e-2) << M << "x" << N << "x" << K;
}

TEST(TaskInterpreter, GemmOnRaggedShapes) {
  Mapping m = default_mapping();
  check_gemm(m, 130, 300, 72);
  check_gemm(m, 1, 1, 8);
  // Smaller tiles: many blocks, several K steps, a partial last one.
  for (auto& inst : m.instances) {
    for (auto& [name, v] : inst.tunables) {
      if (name == "U") v.value = 64;
      if (name == "V") v.value = 32;
      if (name == "WGS") v.value = 1;
    }
  }
  check_gemm(m, 100, 72, 136);
}

}  // namespace
}  // namespace tessel::task
