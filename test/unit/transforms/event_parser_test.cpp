// The event IR as text both ways (frontend/task/event_parser.h): every example task program,
// under its default mapping and the mappings of the lit tests and the GEMM sweep, printed after
// each stage, parses back to a program that prints the same; the stages run on the parsed
// program give what they give in memory (down to the tile IR); malformed text is a UserError at
// its line:column.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "frontend/task/dependence_analysis.h"
#include "frontend/task/event_parser.h"
#include "tasks/programs.h"
#include "transforms/task/lower_to_tile.h"
#include "transforms/task/task_pipeline.h"

namespace tessel::transforms {
namespace {

struct Case {
  std::string program;
  std::string mapping_text, mapping_file;
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const examples::TaskExample& e : examples::task_examples())
    out.push_back({e.name, e.mapping_text, e.mapping_file});
  // The lit tests' mappings (other tile sizes, stages, the mma partition).
  for (const char* f :
       {"dual_gemm", "gemm_mma_partition", "gemm_rowsum", "gemm_small_tiles", "gemm_stages",
        "flash_attention"}) {
    std::string path = std::string(TESSEL_SOURCE_DIR) + "/test/lit/task/" + f + ".tmap";
    const std::string name = f;
    std::string program = "gemm";
    if (name.find("dual") != std::string::npos) program = "dual_gemm";
    if (name.find("rowsum") != std::string::npos) program = "gemm_rowsum";
    if (name.find("attention") != std::string::npos) program = "flash_attention";
    out.push_back({program, read(path), path});
  }
  return out;
}

TEST(EventParser, EveryStageOfEveryExampleRoundTripsAndRunsTheSame) {
  std::vector<std::unique_ptr<task::TaskProgram>> keep;
  auto program_of = [&](const std::string& name) -> const task::TaskProgram* {
    const examples::TaskExample* e = examples::find_task_example(name);
    if (!e) return nullptr;
    keep.push_back(std::make_unique<task::TaskProgram>(e->make(ScalarKind::f16)));
    return keep.back().get();
  };
  int checked = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.mapping_file);
    ASSERT_FALSE(c.mapping_text.empty());
    task::TaskProgram program = examples::find_task_example(c.program)->make(ScalarKind::f16);
    task::Mapping mapping = task::parse_mapping(c.mapping_text, c.mapping_file);
    task::Instantiation inst = task::instantiate(program, mapping);
    const std::vector<std::string>& stages = task_stages();
    for (size_t i = 0; i + 1 < stages.size(); ++i) {
      SCOPED_TRACE(stages[i]);
      TaskCompileOptions options;
      options.stop_after = stages[i];
      std::string text = compile_task_events(inst, options).print();
      task::events::Program parsed = task::events::parse_program(text, "<text>", program_of);
      EXPECT_EQ(parsed.print(), text);
      ++checked;
      // The next stage on the parsed program: what the pipeline gives in memory.
      if (i + 2 < stages.size()) {
        run_task_stage(parsed, stages[i + 1]);
        options.stop_after = stages[i + 1];
        EXPECT_EQ(parsed.print(), compile_task_events(inst, options).print());
      } else {
        EXPECT_EQ(lower_to_tile(parsed).text(), compile_task_program(inst).text());
      }
    }
  }
  EXPECT_EQ(checked, 5 * 11);
}

// Expressions print with the parentheses that make them read back as the same tree.
TEST(EventParser, ExpressionsReadBackAsTheyPrint) {
  using task::Expr;
  Expr a = Expr::size("M"), b = Expr::var("k"), c = Expr::tunable("U");
  std::vector<Expr> exprs = {
      a + b - c,   (a + b) - c, a - (b + c),          a * (b / c),          a * b / c,
      a / (b * c), (a - b) * c, task::cdiv(a, b) + 1, task::min(a, 64) - 3, Expr::extent(0, 1) * 2};
  std::string header = "tasks @gemm[M, N, K](%A: f16 [M, K] global) {\n";
  for (const Expr& e : exprs) {
    SCOPED_TRACE(e.str());
    std::string text = header + "  %e0 = for %k in [4] after {} {\n    %t0 = tensor f32 [" +
                       e.str() + ", 4] register\n  }\n}\n";
    task::TaskProgram program = examples::gemm_tasks(ScalarKind::f16);
    task::events::Program p =
        task::events::parse_program(text, "<text>", [&](const std::string&) { return &program; });
    EXPECT_EQ(p.print(), text);
  }
  // a*(b/c) and a*b/c are different trees, and print differently.
  EXPECT_NE((a * (b / c)).str(), (a * b / c).str());
}

// The grid's tile order on its pfor over blocks reads back as it prints; bad values and a pfor
// that has not the dimensions are errors at the attribute.
TEST(EventParser, TileOrderOfThePforOverBlocks) {
  task::TaskProgram program = examples::gemm_tasks(ScalarKind::f16);
  auto parse = [&](const std::string& pfor) {
    std::string text = "tasks @gemm[M, N, K](%A: f16 [M, K] global) {\n  " + pfor +
                       " {\n    %t0 = tensor f32 [4] register\n  }\n}\n";
    return task::events::parse_program(text, "<text>",
                                       [&](const std::string&) { return &program; });
  };
  auto error = [&](const std::string& pfor) {
    try {
      parse(pfor);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string two =
      "%e0 : [(4, block), (3, block)] = pfor %i, %j in [4, 3] @block after {} ";
  task::events::Program p = parse(two + "{raster_group = 2, alternate_ends = 1}");
  EXPECT_EQ(p.body.at(0)->raster_group, 2);
  EXPECT_EQ(p.body.at(0)->alternate_ends, 1);
  EXPECT_NE(p.print().find("@block after {} {raster_group = 2, alternate_ends = 1} {"),
            std::string::npos)
      << p.print();
  std::string msg = error(two + "{raster_group = 0}");
  EXPECT_NE(msg.find("<text>:2:90: error: event IR: raster_group must be at least 1, not 0"),
            std::string::npos)
      << msg;
  msg = error("%e0 : [(4, block)] = pfor %i in [4] @block after {} {raster_group = 2}");
  EXPECT_NE(msg.find("error: event IR: raster_group orders a 2-D pfor; this one has 1 dimension"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace tessel::transforms
