// The grouped GEMM (examples/kernels/gemm_grouped.tir: A [sum M_g, K], B [G, N, K], C [sum M_g, N],
// the groups' row ends on the device, find_group and tile windows of src/ir/grouped.h): lowered by
// the default pipeline and run in the interpreter with the roles interleaved, on few SMs so that a
// block's tiles cross groups, against plain loops bit for bit — ragged groups, empty groups, a
// group of one row, groups ending inside a tile; C poisoned, so a write into another group's rows
// or a row left unwritten shows. And its CUDA for sm_90a: A's TMA boxes at the group's first row,
// C's parts by TMA only inside the group's window, nothing spilled.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "tessel/example_kernels.h"
#include "sm90a_compile.h"

namespace tessel {
namespace {

using interp::HostTensor;

void check_grouped(const std::vector<int64_t>& rows, int64_t N, int64_t K, int64_t sm_count) {
  const int64_t G = static_cast<int64_t>(rows.size());
  int64_t M = 0;
  for (int64_t r : rows) M += r;
  std::map<std::string, int64_t> sizes = {{"G", G}, {"M", M}, {"N", N}, {"K", K}};
  SCOPED_TRACE("G = " + std::to_string(G) + " M = " + std::to_string(M) +
               " N = " + std::to_string(N) + " K = " + std::to_string(K) + " on " +
               std::to_string(sm_count) + " SMs");
  auto module =
      ir::parse_module(examples::lowered_kernels().at("gemm_grouped"), "gemm_grouped.tir");
  pipeline::lower(*module);
  const ir::Operation& kernel = *module->kernels.front();
  for (const char* schedule : {"round-robin", "producer-first", "consumer-first", "random:5"}) {
    SCOPED_TRACE(schedule);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    HostTensor A(ir::ScalarKind::f16, {M, K}), B(ir::ScalarKind::f16, {G, N, K}),
        C(ir::ScalarKind::f16, {M, N}), ends(ir::ScalarKind::i32, {G});
    for (int64_t i = 0; i < A.size(); ++i) A.set_float(i, real(rng));
    for (int64_t i = 0; i < B.size(); ++i) B.set_float(i, real(rng));
    for (int64_t i = 0; i < C.size(); ++i) C.set_float(i, NAN);  // poison
    int64_t end = 0;
    for (int64_t g = 0; g < G; ++g) ends.set_int(g, end += rows[g]);
    std::vector<interp::Argument> args = {&A, &B, &C, &ends};
    interp::RunOptions options;
    options.sizes = sizes;
    options.sm_count = sm_count;
    options.schedule = interp::Schedule::parse(schedule);
    interp::interpret(kernel, args, options);
    int64_t bad = 0, first = 0;
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t m = first; m < first + rows[g]; ++m) {
        for (int64_t n = 0; n < N; ++n) {
          float sum = 0.0f;
          for (int64_t k = 0; k < K; ++k) {
            sum = sum + static_cast<float>(A.get_float(m * K + k)) *
                            static_cast<float>(B.get_float((g * N + n) * K + k));
          }
          const float want = static_cast<float>(static_cast<_Float16>(sum));
          const double got = C.get_float(m * N + n);
          if (got != want && bad++ < 5) {
            ADD_FAILURE() << "group " << g << ": C[" << m << "," << n << "] = " << got
                          << ", reference " << want;
          }
        }
      }
      first += rows[g];
    }
    EXPECT_EQ(bad, 0);
  }
}

// Groups ending inside a tile (130, 5), an empty group (0), a group of one row, a group of exactly
// one tile (128); N ragged (N % 8 == 0 is a fact of the kernel); K of one partial block and of
// several; 3 SMs for more tiles than blocks.
TEST(GroupedGemm, InterpretedLoweredKernelMatchesPlainLoopsBitForBit) {
  check_grouped({130, 0, 1, 128, 5}, 264, 72, 3);
  check_grouped({3, 200}, 8, 136, 3);
  check_grouped({0, 0, 7}, 16, 8, 1);
}

// Reads past a window's end are NaN in the interpreter: a program that lets them reach a store
// (here C's tile without its window: the rows of the next group get A's unspecified rows) shows
// NaN where the real kernel would write garbage.
TEST(GroupedGemm, OverReadRowsAreNaNInTheInterpreter) {
  std::string text = examples::lowered_kernels().at("gemm_grouped");
  const std::string from =
      "%C_tile = tile %C, %gm, %bn, %first, %rows {masked, pad = 0.0, "
      "shape = [128,256], window = 0}";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(),
               "%C_row = div %first, %c128 : index\n  %C_bm = add %C_row, %gm : index\n"
               "  %C_tile = tile %C, %C_bm, %bn {masked, pad = 0.0, shape = [128,256]}");
  auto module = ir::parse_module(text, "broken.tir");
  const ir::Operation& kernel = *module->kernels.front();
  HostTensor A(ir::ScalarKind::f16, {4, 8}), B(ir::ScalarKind::f16, {1, 8, 8}),
      C(ir::ScalarKind::f16, {4, 8}), ends(ir::ScalarKind::i32, {1});
  for (int64_t i = 0; i < A.size(); ++i) A.set_float(i, 0.5);
  for (int64_t i = 0; i < B.size(); ++i) B.set_float(i, 0.25);
  ends.set_int(0, 2);  // rows 2 and 3 belong to no group
  std::vector<interp::Argument> args = {&A, &B, &C, &ends};
  interp::RunOptions options;
  options.sizes = {{"G", 1}, {"M", 4}, {"N", 8}, {"K", 8}};
  interp::interpret(kernel, args, options);
  EXPECT_EQ(C.get_float(0), 1.0);
  EXPECT_TRUE(std::isnan(C.get_float(2 * 8)));
}

TEST(GroupedGemm, CompilesToWindowedTmaWithoutSpills) {
  auto module =
      ir::parse_module(examples::lowered_kernels().at("gemm_grouped"), "gemm_grouped.tir");
  CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
  const std::string& cuda = kernel.cuda_source();
  EXPECT_NE(cuda.find("tessel::device::find_group(ends, G, "), std::string::npos) << cuda;
  // A's box starts at the group's first row plus the tile's.
  EXPECT_NE(cuda.find("&tmap_A, &ring_full[slot], k * 64, (first) + gm * 128);"), std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("if (inside_window) {"), std::string::npos) << cuda;
  const std::string log = testing::ptxas_report(cuda);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
  EXPECT_NE(log.find(", 0 bytes spill stores"), std::string::npos) << log;
}

}  // namespace
}  // namespace tessel
