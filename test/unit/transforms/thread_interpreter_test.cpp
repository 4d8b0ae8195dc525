// The synthesized kernels run thread by thread (interp/thread_interpreter.h) give the tile-level
// interpreter's results: every register value lives only in the threads its layout names, shared
// tiles are laid out and swizzled as chosen, and each mma runs atom by atom through the atoms'
// own fragments. Random inputs, ragged sizes (masked partial tiles) where the kernel allows them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "interp/interpreter.h"
#include "interp/thread_interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "support/diagnostics.h"
#include "tile/kernels.h"
#include "transforms/layout/schedule_rows.h"
#include "transforms/layout/shared_layouts_pass.h"
#include "transforms/layout/synthesize_layouts.h"

namespace tessel::transforms {
using ir::ScalarKind;
using tessel::TileKernel;
namespace {

std::string read(const std::string& rel) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in.good()) << rel;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Case {
  std::string file;
  std::map<std::string, int64_t> sizes;
  double tolerance;  // 0: bit for bit
};
// How gtest shows a case in failures and --gtest_list_tests (else a byte dump of the struct).
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.file;
}

// Runs `text` at tile level and, after synthesis, thread by thread, on the same random inputs.
void check(const std::string& text, const Case& c, uint32_t seed) {
  auto tile_module = ir::parse_module(text, c.file);
  auto thread_module = ir::parse_module(text, c.file);
  synthesize_layouts(*thread_module);
  synthesize_shared_layouts(*thread_module);
  const ir::Operation& k0 = *tile_module->kernels[0];
  const ir::Operation& k1 = *thread_module->kernels[0];
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<interp::HostTensor> a, b;
  std::vector<interp::Argument> args0, args1;
  for (const auto& p : k0.region(0)->arguments()) {
    if (p->type().is_tensor()) {
      interp::HostTensor t(p->type().element(), interp::concrete_shape(p->type(), c.sizes));
      for (int64_t i = 0; i < t.size(); ++i) {
        if (ir::is_float(t.element())) {
          t.set_float(i, dist(rng));
        } else {
          t.set_int(i, int64_t(rng() % 7) - 3);
        }
      }
      a.push_back(t);
      b.push_back(t);
    } else {
      a.emplace_back();
      b.emplace_back();
    }
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const auto& p = k0.region(0)->argument(int(i));
    if (p->type().is_tensor()) {
      args0.push_back(&a[i]);
      args1.push_back(&b[i]);
    } else {
      if (ir::is_float(p->type().element())) {
        args0.push_back(1e-5);
        args1.push_back(1e-5);
      } else {
        args0.push_back(int64_t(3));
        args1.push_back(int64_t(3));
      }
    }
  }
  interp::RunOptions options;
  options.sizes = c.sizes;
  interp::interpret(k0, args0, options);
  interp::ThreadRunStats stats;
  try {
    stats = interp::interpret_threads(k1, args1, options);
  } catch (const UserError& e) {
    FAIL() << e.what() << "\n" << ir::print(*thread_module);
  }
  EXPECT_GT(stats.blocks, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    for (int64_t j = 0; j < a[i].size(); ++j) {
      bool fl = ir::is_float(a[i].element());
      double x = fl ? a[i].get_float(j) : double(a[i].get_int(j));
      double y = fl ? b[i].get_float(j) : double(b[i].get_int(j));
      if (c.tolerance == 0) {
        ASSERT_TRUE(x == y || (std::isnan(x) && std::isnan(y)))
            << c.file << " argument " << i << " element " << j << ": tile " << x << " thread " << y;
      } else {
        ASSERT_NEAR(x, y, c.tolerance * (1 + std::fabs(x)))
            << c.file << " argument " << i << " element " << j;
      }
    }
  }
}

class ThreadLevel : public ::testing::TestWithParam<Case> {};

TEST_P(ThreadLevel, EqualsTileLevel) {
  const Case& c = GetParam();
  std::string text = read(c.file);
  for (uint32_t seed : {1u, 2u}) check(text, c, seed);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, ThreadLevel,
    ::testing::Values(
        Case{"examples/tile/gemm.tir", {{"M", 40}, {"N", 50}, {"K", 24}}, 0},
        Case{"test/lit/run/gemm_interpret.tir", {{"M", 70}, {"N", 33}, {"K", 40}}, 0},
        Case{"test/lit/transforms/gemm_cooperative.tir", {{"M", 130}, {"N", 264}, {"K", 72}}, 0},
        Case{"test/lit/transforms/gemm_small_banks.tir", {{"M", 64}, {"N", 32}, {"K", 32}}, 0},
        Case{"test/lit/transforms/attention_sm90.tir", {{"S", 128}}, 0},
        Case{"test/lit/transforms/attention_sm80.tir", {{"S", 128}}, 0},
        Case{"test/lit/transforms/attention_pinned_rearrange.tir", {{"S", 128}}, 0},
        Case{"test/lit/transforms/epilogue_stmatrix.tir", {}, 0},
        Case{"test/lit/transforms/gemm_int4_ldmatrix_128.tir",
             {{"M", 70}, {"N", 150}, {"K", 140}, {"G", 2}},
             0},
        Case{"examples/tile/softmax.tir", {{"M", 19}, {"N", 70}}, 1e-6},
        // The re-associated f32 sum may move the f16 output by one unit in the last place.
        Case{"examples/tile/rmsnorm.tir", {{"M", 9}, {"N", 100}}, 2e-3}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string n = info.param.file.substr(info.param.file.rfind('/') + 1);
      n = n.substr(0, n.find('.'));
      return n;
    });

// Row programs as schedule-rows lays them out for a hinted size, run thread by thread: the tile
// that covers a ragged row in one over a block that is not a power of two (softmax and layernorm
// at N = 8200: [1,9216] over 288 threads, 9 warps, four 16-byte vectors each; the reductions
// cross 9 warps) and a power-of-two block, at sizes the tile covers and one it does not (the
// loops as written run). Softmax's outputs are ~1/N: its tolerance is absolute, 1e-6 (a sum that
// missed a warp's partials moves them by ~10%). The thread interpreter's reduction over a
// 288-thread mode was an XOR butterfly, which pairs threads past the block and missed the last
// warp's partials in warps 1-7 (layernorm off by 1-5% from column 256 on): now a fold per group.
TEST(ThreadLevelRows, ScheduledRowProgramsEqualTileLevel) {
  for (const auto& [file, tolerance] : std::vector<std::pair<std::string, double>>{
           {"examples/kernels/softmax_auto.tir", 1e-6},
           {"examples/kernels/layernorm_auto.tir", 2e-3},
           {"examples/kernels/softmax_exp2_auto.tir", 1e-6}}) {
    for (const auto& [hint_n, run_n] :
         std::vector<std::pair<int64_t, int64_t>>{{8200, 8200}, {8200, 9304}, {8192, 8192}}) {
      SCOPED_TRACE(file + " hinted N = " + std::to_string(hint_n) +
                   ", run at N = " + std::to_string(run_n));
      auto module = ir::parse_module(read(file), file);
      set_size_hints(*module->kernels[0], {{"M", 8191}, {"N", hint_n}});
      schedule_rows(*module);
      const std::string scheduled = ir::print(*module);
      check(scheduled, Case{file, {{"M", 2}, {"N", run_n}}, tolerance}, 3);
    }
  }
}

// The f16 x int4 GEMM with W staged through shared memory: synthesis reads W with ldmatrix in
// 16-bit units of four int4 values straight into the mma B fragment (no rearrange), and the
// thread-level run, which executes ldmatrix lane by lane unit by unit, equals the tile-level run at
// ragged sizes (K not a multiple of the 16-wide K tile: masked, zero-padded tiles).
TEST(ThreadLevelInt4, LdmatrixPackedInt4EqualsTileLevel) {
  const std::string file = "test/lit/transforms/gemm_int4_ldmatrix.tir";
  std::string text = read(file);
  auto m = ir::parse_module(text, file);
  synthesize_layouts(*m);
  synthesize_shared_layouts(*m);
  std::string printed = ir::print(*m);
  EXPECT_EQ(printed.find("rearrange"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%rW = copy %sW {atom = \"ldmatrix.x1.b16\""), std::string::npos)
      << printed;
  check(text, Case{file, {{"M", 70}, {"N", 90}, {"K", 37}, {"G", 3}}, 0}, 11);
  check(text, Case{file, {{"M", 33}, {"N", 130}, {"K", 64}, {"G", 4}}, 0}, 12);
}

// ldmatrix of packed int4 is executed unit by unit: with W's shared layout replaced by one that
// keeps every element's place known to the copies but orders the four int4 values inside each
// 16-bit unit differently (k+1 and k+8 swapped), the st.shared side still stores correctly, yet
// ldmatrix hands each lane whole units in memory order, so the dequantized fragment is wrong.
TEST(ThreadLevelInt4, UnitOrderThatLdmatrixCannotDeliverChangesTheResult) {
  const std::string file = "test/lit/transforms/gemm_int4_ldmatrix.tir";
  auto m = ir::parse_module(read(file), file);
  synthesize_layouts(*m);
  synthesize_shared_layouts(*m);
  std::string text = ir::print(*m);
  const std::string good_layout = "((32,2),(2,4,2)):((32,4),(1,8,2))";
  const std::string bad_layout = "((32,2),(2,4,2)):((32,4),(2,8,1))";
  std::string broken = text;
  int replaced = 0;
  for (size_t at = broken.find(good_layout); at != std::string::npos;
       at = broken.find(good_layout)) {
    broken.replace(at, good_layout.size(), bad_layout);
    ++replaced;
  }
  ASSERT_GE(replaced, 1) << text;
  std::map<std::string, int64_t> sizes = {{"M", 16}, {"N", 64}, {"K", 16}, {"G", 1}};
  auto run = [&](const std::string& t) {
    auto mod = ir::parse_module(t, file);
    std::mt19937 rng(5);
    interp::HostTensor A(ScalarKind::f16, {16, 16}), W(ScalarKind::i4, {64, 16}),
        S(ScalarKind::f16, {64, 1}), C(ScalarKind::f16, {16, 64});
    for (int64_t i = 0; i < A.size(); ++i) A.set_float(i, double(int64_t(rng() % 5) - 2));
    for (int64_t i = 0; i < W.size(); ++i) W.set_int(i, int64_t(rng() % 15) - 7);
    for (int64_t i = 0; i < S.size(); ++i) S.set_float(i, 1.0);
    interp::RunOptions options;
    options.sizes = sizes;
    interp::interpret_threads(*mod->kernels[0], {&A, &W, &S, &C}, options);
    return C.bytes();
  };
  std::vector<uint8_t> good = run(text);
  EXPECT_EQ(good, run(text));
  EXPECT_NE(good, run(broken));
}

// Every example kernel of the tile language (examples/tile/kernels.h) at ragged sizes that honour
// its facts.
struct ExampleCase {
  std::string name;
  std::function<TileKernel()> make;
  double tolerance;
};
void PrintTo(const ExampleCase& c, std::ostream* out) {
  *out << c.name;
}

class Examples : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(Examples, SynthesisSucceedsAndThreadLevelEqualsTileLevel) {
  const ExampleCase& c = GetParam();
  TileKernel k = c.make();
  std::string text = k.text();
  Case run{c.name, {}, c.tolerance};
  int i = 0;
  for (const std::string& size : k.op().signature().sizes) {
    int64_t v = size == "Bt" || size == "H" ? 2 : 37 + 11 * i++;
    for (const ir::Fact& f : k.op().signature().facts)
      if (f.symbol == size) v = (v + f.divisor - 1) / f.divisor * f.divisor;
    run.sizes[size] = v;
  }
  check(text, run, 7);
}

using examples::GemmTiles;
INSTANTIATE_TEST_SUITE_P(
    All, Examples,
    ::testing::Values(
        ExampleCase{"gemm_f16", [] { return examples::gemm(ScalarKind::f16, ScalarKind::f16); }, 0},
        ExampleCase{"gemm_bf16_f32",
                    [] {
                      return examples::gemm(ScalarKind::bf16, ScalarKind::f32, {64, 64, 32});
                    },
                    0},
        ExampleCase{"gemm_fp8",
                    [] {
                      return examples::gemm(ScalarKind::f8e4m3, ScalarKind::f16, {64, 64, 32});
                    },
                    0},
        ExampleCase{"batched_gemm",
                    [] {
                      return examples::batched_gemm(ScalarKind::f16, {16, 16, 16});
                    },
                    0},
        ExampleCase{"dual_gemm",
                    [] {
                      return examples::dual_gemm(ScalarKind::bf16, {16, 16, 16});
                    },
                    0},
        ExampleCase{"gemm_rowsum", [] { return examples::gemm_rowsum(ScalarKind::f16); }, 1e-5},
        ExampleCase{"gemm_bias_relu", [] { return examples::gemm_bias_relu(ScalarKind::f16); }, 0},
        ExampleCase{"gemm_int4", [] { return examples::gemm_int4(16); }, 0},
        ExampleCase{"gemv", [] { return examples::gemv(ScalarKind::f16, 16, 32); }, 1e-5},
        ExampleCase{"softmax", [] { return examples::softmax(ScalarKind::f16, 8, 32); }, 2e-3},
        ExampleCase{"rmsnorm", [] { return examples::rmsnorm(ScalarKind::f16, 4, 64); }, 2e-3},
        ExampleCase{"layernorm", [] { return examples::layernorm(ScalarKind::f16, 4, 64); }, 2e-3},
        ExampleCase{"flash_attention", [] { return examples::flash_attention(false, 64, 64, 64); },
                    2e-3},
        ExampleCase{"flash_attention_causal",
                    [] { return examples::flash_attention(true, 64, 64, 64); }, 2e-3}),
    [](const ::testing::TestParamInfo<ExampleCase>& info) { return info.param.name; });

// sm_80 has no fp8 mma: the fp8 GEMM example pinned to it is an error naming the op.
TEST(ExamplesErrors, Fp8GemmOnSm80HasNoAtom) {
  TileKernel k = examples::gemm(ScalarKind::f8e4m3, ScalarKind::f16, {64, 64, 32});
  std::string text = k.text();
  size_t at = text.find(" : index, index");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, " {target = \"sm_80\"}");
  auto m = ir::parse_module(text, "gemm_fp8");
  try {
    synthesize_layouts(*m);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "mma: no sm_80 atom tiles an mma of [M,N,K] = [64,64,32] with f8e4m3 inputs"),
              std::string::npos)
        << e.what();
  }
}

// The thread-level run catches a wrong layout: the synthesized GEMM with its accumulator's layout
// replaced everywhere by another bijection (two thread bits swapped) fails in the mma, which finds
// a thread that does not hold the element the atom gives it.
TEST(ThreadLevelErrors, CorruptedAccumulatorLayoutIsCaught) {
  auto m = ir::parse_module(read("test/lit/run/gemm_interpret.tir"), "gemm.tir");
  synthesize_layouts(*m);
  synthesize_shared_layouts(*m);
  const std::string good = "(((4,8),2,2),((2,2),2)):(((64,1),16,256),((32,8),512))";
  const std::string bad = "(((4,8),2,2),((2,2),2)):(((1,64),16,256),((32,8),512))";
  int changed = 0;
  walk(m->kernels[0].get(), [&](ir::Operation* op) {
    auto fix = [&](ir::Value* v) {
      if (v->type().is_tensor() && v->type().layout() == good) {
        v->set_type(v->type().with_layout(bad));
        ++changed;
      }
    };
    for (const auto& r : op->results()) fix(r.get());
    for (const auto& region : op->regions())
      for (const auto& a : region->arguments()) fix(a.get());
  });
  ASSERT_GE(changed, 4);
  interp::HostTensor A(ScalarKind::f16, {40, 24}), B(ScalarKind::f16, {50, 24}),
      C(ScalarKind::f16, {40, 50});
  interp::RunOptions options;
  options.sizes = {{"M", 40}, {"N", 50}, {"K", 24}};
  try {
    interp::interpret_threads(*m->kernels[0], {&A, &B, &C}, options);
    FAIL() << "the corrupted layout went unnoticed";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("mma: thread "), std::string::npos) << e.what();
  }
}

// ldmatrix is executed lane by lane: with the tiles' swizzle replaced by one that splits the
// 16-byte rows (Sw<1,2,3> flips bit 2 of the element offset inside a row), the copies still put
// every element where the layout says, but ldmatrix delivers the wrong elements (or reads past
// the tile): the thread-level run no longer matches.
TEST(ThreadLevelErrors, SwizzleThatSplitsLdmatrixRowsChangesTheResult) {
  auto m = ir::parse_module(read("test/lit/run/gemm_interpret.tir"), "gemm.tir");
  synthesize_layouts(*m);
  synthesize_shared_layouts(*m);
  std::string text = ir::print(*m);
  ASSERT_NE(text.find("a_load = \"ldmatrix.x4.b16\""), std::string::npos) << text;
  std::string broken = text;
  for (size_t at = broken.find("Sw<1,3,3>"); at != std::string::npos; at = broken.find("Sw<1,3,3>"))
    broken.replace(at, 9, "Sw<1,2,3>");
  ASSERT_NE(broken, text);
  std::map<std::string, int64_t> sizes = {{"M", 32}, {"N", 32}, {"K", 16}};
  auto run = [&](const std::string& t) {
    auto mod = ir::parse_module(t, "gemm.tir");
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    interp::HostTensor A(ScalarKind::f16, {32, 16}), B(ScalarKind::f16, {32, 16}),
        C(ScalarKind::f16, {32, 32});
    for (int64_t i = 0; i < A.size(); ++i) A.set_float(i, dist(rng));
    for (int64_t i = 0; i < B.size(); ++i) B.set_float(i, dist(rng));
    interp::RunOptions options;
    options.sizes = sizes;
    interp::interpret_threads(*mod->kernels[0], {&A, &B, &C}, options);
    return C.bytes();
  };
  std::vector<uint8_t> good = run(text);
  EXPECT_EQ(good, run(text));
  try {
    EXPECT_NE(good, run(broken));
  } catch (const UserError& e) {
    // A row that the broken swizzle moves past the tile is read out of bounds: also caught.
    EXPECT_NE(std::string(e.what()).find("ldmatrix.x4.b16 reads shared offset"), std::string::npos)
        << e.what();
  }
}

// A layout that does not fit the op is caught thread by thread, naming the op and the thread.
TEST(ThreadLevelErrors, InconsistentLayoutIsCaught) {
  std::string text = R"(
kernel @k(%X: global<f32>[8,32], %Y: global<f32>[8,32]) {
  %c0 = const {value = 0} : index
  %c1 = const {value = 1} : index
  %i = block_grid %c1 {threads = 32} : index
  %t = tile %X, %c0, %c0 {shape = [8,32]} : global<f32>[8,32]
  %r = copy %t : register<f32, (32,8):(8,1)>[8,32]
  %s = reduce %r {dims = [1], kind = sum} : register<f32, (32,1):(1,0)>[8]
  %b = broadcast %s {dims = [1]} : register<f32, (32,8):(8,1)>[8,32]
  %u = tile %Y, %c0, %c0 {shape = [8,32]} : global<f32>[8,32]
  copy %b, %u
}
)";
  auto m = ir::parse_module(text, "bad.tir");
  interp::HostTensor x(ir::ScalarKind::f32, {8, 32}), y(ir::ScalarKind::f32, {8, 32});
  interp::RunOptions options;
  try {
    interp::interpret_threads(*m->kernels[0], {&x, &y}, options);
    FAIL();
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.tir:8:3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("reduce: thread"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tessel::transforms
