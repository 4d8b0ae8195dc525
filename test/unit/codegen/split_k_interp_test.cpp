// Split-K (src/transforms/schedule/split_k.h) in the interpreter: the example GEMMs with their
// grid pinned `split_k`, lowered by the default pipeline (roles, barriers, persistent units of
// (tile, part), workspaces, arrival counters), run with the roles interleaved under several
// schedules, against plain loops that sum in the kernel's documented order: each part's products
// over its K blocks in order from +0 in f32, then the parts' sums from +0 in part order, rounded
// to f16 — bit for bit, whatever the schedule (the reduction is deterministic).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "pipeline/pipeline.h"
#include "tessel/example_kernels.h"
#include "pin_grid.h"
#include "swapped_gemm_text.h"

namespace tessel {
namespace {

using interp::HostTensor;

std::unique_ptr<ir::Module> with_split(const std::string& name, const std::string& pin) {
  const std::string text =
      testing::pin_block_grid(examples::lowered_kernels().at(name), "split_k = " + pin);
  return ir::parse_module(text, name + ".tir");
}

float round_f16(float x) {
  return static_cast<float>(static_cast<_Float16>(x));
}

// C = A B^T (b_kn = false: B is [N,K]) or A B (b_kn: B is [K,N]) summed in `parts` parts of the
// 64-wide K blocks, as split-k sums them.
std::vector<float> split_reference(const HostTensor& A, const HostTensor& B, bool b_kn, int64_t M,
                                   int64_t N, int64_t K, int64_t parts) {
  const int64_t blocks = (K + 63) / 64;
  std::vector<float> out(M * N);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float sum = 0.0f;
      for (int64_t s = 0; s < parts; ++s) {
        const int64_t first = s * blocks / parts * 64,
                      end = std::min(K, (s + 1) * blocks / parts * 64);
        float partial = 0.0f;
        for (int64_t k = first; k < end; ++k) {
          const double b = b_kn ? B.get_float(k * N + n) : B.get_float(n * K + k);
          partial = partial + static_cast<float>(A.get_float(m * K + k)) * static_cast<float>(b);
        }
        sum = sum + partial;
      }
      out[m * N + n] = round_f16(sum);
    }
  }
  return out;
}

void check_split_module(std::unique_ptr<ir::Module> module, const std::string& label, bool b_kn,
                        std::map<std::string, int64_t> sizes, int64_t sm_count, int64_t parts,
                        std::vector<const char*> schedules) {
  SCOPED_TRACE(label + " M = " + std::to_string(sizes["M"]) + " N = " +
               std::to_string(sizes["N"]) + " K = " + std::to_string(sizes["K"]));
  pipeline::lower(*module);
  const ir::Operation& kernel = *module->kernels.front();
  bool counts = false;
  ir::walk(const_cast<ir::Operation*>(&kernel),
           [&](ir::Operation* op) { counts = counts || op->kind() == ir::OpKind::counter_arrive; });
  ASSERT_TRUE(counts) << "split-k did not run";
  const int64_t M = sizes["M"], N = sizes["N"], K = sizes["K"];
  for (const char* schedule : schedules) {
    SCOPED_TRACE(schedule);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::vector<HostTensor> store;
    for (const auto& arg : kernel.region(0)->arguments()) {
      HostTensor t(arg->type().element(), interp::concrete_shape(arg->type(), sizes));
      for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, real(rng));  // C: poisoned too
      store.push_back(std::move(t));
    }
    std::vector<interp::Argument> args;
    for (auto& t : store) args.push_back(&t);
    interp::RunOptions options;
    options.sizes = sizes;
    options.sm_count = sm_count;
    options.schedule = interp::Schedule::parse(schedule);
    interp::interpret(kernel, args, options);
    const std::vector<float> want = split_reference(store[0], store[1], b_kn, M, N, K, parts);
    int64_t bad = 0;
    for (int64_t i = 0; i < M * N; ++i) {
      if (store[2].get_float(i) != want[i] && bad++ < 5) {
        ADD_FAILURE() << "C[" << i / N << "," << i % N << "] = " << store[2].get_float(i)
                      << ", reference " << want[i];
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

void check_split(const std::string& name, const std::string& pin, bool b_kn,
                 std::map<std::string, int64_t> sizes, int64_t sm_count, int64_t parts,
                 std::vector<const char*> schedules = {"round-robin", "producer-first",
                                                       "consumer-first", "random:11"}) {
  check_split_module(with_split(name, pin), name + " split_k = " + pin, b_kn, sizes, sm_count,
                     parts, schedules);
}

std::string swapped_gemm(int rows, int tokens, bool b_kn, const std::string& pin) {
  return test_support::swapped_gemm_text(rows, tokens, b_kn, "split_k = " + pin);
}

// Three parts of 1, 1 and 2 K blocks (K = 200: 4 blocks, the last partial), of 3 blocks each
// (K = 520), and of 0, 0 and 1 blocks (K = 8: two parts add nothing); ragged M and N, more than
// one tile in each, N % 8 != 0 (the stores TMA cannot take). One test each (24 s as one).
TEST(SplitK, FixedPartsMatchTheSplitSumBitForBitUnevenParts) {
  check_split("gemm", "3", false, {{"M", 257}, {"N", 300}, {"K", 200}}, 3, 3);
}
TEST(SplitK, FixedPartsMatchTheSplitSumBitForBitEvenParts) {
  check_split("gemm", "3", false, {{"M", 129}, {"N", 264}, {"K", 520}}, 3, 3);
}
TEST(SplitK, FixedPartsMatchTheSplitSumBitForBitEmptyParts) {
  check_split("gemm", "3", false, {{"M", 1}, {"N", 1}, {"K", 8}}, 3, 3);
}
TEST(SplitK, FixedPartsMatchTheSplitSumBitForBitBKN) {
  check_split("gemm_nn", "2", true, {{"M", 130}, {"N", 264}, {"K", 328}}, 3, 2);
}

// The cost model: 20 SMs for 4 tiles of 128x256 allow 5 parts, 9 K blocks only 2 (at least 4
// each); 1 SM allows 1 (the partial is still written and read back).
TEST(SplitK, AutomaticPartsFollowTheCostModel) {
  check_split("gemm", "auto", false, {{"M", 129}, {"N", 264}, {"K", 520}}, 20, 2,
              {"producer-first", "random:3"});
  check_split("gemm", "auto", false, {{"M", 129}, {"N", 264}, {"K", 520}}, 1, 1, {"round-robin"});
}

// Swapped operands: the parts' partials are tiles of C's shape, written and read through the
// accumulator's transpose — also for a square tile (64x64), whose shape does not tell. Ragged M
// and N with several tiles each way; K blocks split 3 ways (2, 2 and 3 blocks of K = 392).
TEST(SplitK, SwappedOperandsStoreTheirPartialsTransposed) {
  struct Case {
    int rows, tokens;
    bool b_kn;
  };
  for (const Case& c : {Case{64, 16, false}, Case{64, 64, false}, Case{128, 16, false},
                        Case{64, 64, true}}) {
    check_split_module(ir::parse_module(swapped_gemm(c.rows, c.tokens, c.b_kn, "3"), "swap.tir"),
                       "swap " + std::to_string(c.rows) + "x" + std::to_string(c.tokens) +
                           (c.b_kn ? " B [K,N]" : " B [N,K]"),
                       c.b_kn, {{"M", 40}, {"N", 136}, {"K", 392}}, 5, 3, {"random:5"});
  }
}

// In 2x1 clusters (the A tile multicast to two blocks of adjacent weight rows, which take the
// same part): three row tiles of N = 136 leave the second block of the last cluster past the
// grid; it must neither write a partial nor arrive on another tile's counter.
TEST(SplitK, ClustersTakeOnePartOfAdjacentTiles) {
  auto module = ir::parse_module(swapped_gemm(64, 16, false, "3, cluster = [2,1]"), "swap.tir");
  check_split_module(std::move(module), "swap 64x16 in 2x1 clusters", false,
                     {{"M", 40}, {"N", 136}, {"K", 392}}, 4, 3, {"random:7", "consumer-first"});
}

// The lowered kernel (workspaces, counter_arrive, the 3-D grid walked as units) prints and parses
// back to the same text: what the kernel cache stores.
TEST(SplitK, TheLoweredTextRoundTrips) {
  auto module = with_split("gemm", "auto");
  pipeline::lower(*module);
  const std::string text = ir::print(*module);
  auto again = ir::parse_module(text, "lowered.tir");
  EXPECT_EQ(ir::print(*again), text);
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// The interpreter's refusals on workspaces (src/ir/async.h, "Workspaces"): each names the op.
std::string interpret_error(const std::string& body) {
  const std::string text =
      "kernel @w[N](%X: global<f32>[N]) {\n"
      "  %N = size {name = N} : index\n"
      "  %c0 = const {value = 0} : index\n"
      "  %c1 = const {value = 1} : index\n"
      "  %c2 = const {value = 2} : index\n"
      "  %c3 = const {value = 3} : index\n" +
      body + "}\n";
  auto module = ir::parse_module(text, "workspace.tir");
  interp::HostTensor x(ir::ScalarKind::f32, {4});
  std::vector<interp::Argument> args = {&x};
  interp::RunOptions options;
  options.sizes = {{"N", 4}};
  try {
    interp::interpret(*module->kernels.front(), args, options);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Workspaces, TheInterpreterRefusesPartsOutsideAndCountersNotLeftZero) {
  EXPECT_NE(interpret_error("  %ws = workspace %c1 : global<f32>[N]\n"
                            "  %b = block_grid %c1 : index\n"
                            "  %p = workspace_part %ws, %c2 : global<f32>[N]\n")
                .find("workspace_part: part 2 of a workspace of 1"),
            std::string::npos);
  EXPECT_NE(interpret_error("  %ws = workspace %c0 : global<f32>[N]\n"
                            "  %b = block_grid %c1 : index\n")
                .find("workspace: the count is 0, not positive"),
            std::string::npos);
  // Arriving with n = 3 leaves 1 in the counter; an arrival with n = 1 finds it outside [0, 1).
  const std::string counted = interpret_error(
      "  %cs = workspace %c1 : global<i32>[1]\n"
      "  %b = block_grid %c1 : index\n"
      "  for %i = %c0 to %c1 step %c1 {\n"
      "    %c = workspace_part %cs, %c0 : global<i32>[1]\n"
      "    %k = counter_arrive %c, %c3 : index\n"
      "    %k2 = counter_arrive %c, %c1 : index\n"
      "  }\n");
  EXPECT_NE(counted.find("counter_arrive: the counter holds 1, outside [0, 1)"), std::string::npos)
      << counted;
  // Arrivals that complete a count leave the counter zero: n = 1 twice, then n = 3 three times.
  EXPECT_EQ(interpret_error("  %cs = workspace %c1 : global<i32>[1]\n"
                            "  %b = block_grid %c1 : index\n"
                            "  for %i = %c0 to %c1 step %c1 {\n"
                            "    %c = workspace_part %cs, %c0 : global<i32>[1]\n"
                            "    %a = counter_arrive %c, %c1 : index\n"
                            "    %b1 = counter_arrive %c, %c1 : index\n"
                            "    %d = counter_arrive %c, %c3 : index\n"
                            "    %e = counter_arrive %c, %c3 : index\n"
                            "    %f = counter_arrive %c, %c3 : index\n"
                            "    %g = counter_arrive %c, %c1 : index\n"
                            "  }\n"),
            "");
}

}  // namespace
}  // namespace tessel
