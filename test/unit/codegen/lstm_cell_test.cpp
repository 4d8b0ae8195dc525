// The LSTM cells (examples/kernels/lstm_cell.tir: two mainloops, x against W_x and then h against
// W_h, into four gate accumulators, the state update in the epilogue; lstm_cell_interleaved.tir:
// the same into one [128,256] accumulator over gate-interleaved weights, sliced into the gates):
// in the interpreter as written and lowered by the default pipeline (roles interleaved, few SMs so
// that one block walks several tiles through the shared ring), against plain loops bit for bit;
// and lstm_cell.tir's CUDA for sm_90a: the second mainloop continues the first one's accumulators
// in place, the gate math makes no calls, at most a register spills; the interleaved cell with
// `{approx}` gate math (bench/kernel-variants/lstm/): one tanh.approx per gate value, no spills.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <random>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "tessel/example_kernels.h"
#include "sm90a_compile.h"
#include "pin_grid.h"

namespace tessel {
namespace {

using interp::HostTensor;

float round_f16(float x) {
  return static_cast<float>(static_cast<_Float16>(x));
}

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));  // the interpreter's float sigmoid
}

// Arguments in the kernel's order: x, h, c, Wx, Wh, b, c_out, h_out.
struct Cell {
  std::vector<HostTensor> args;
};

// Weights [4,H,K] (lstm_cell.tir) or, interleaved, [H/64,256,K] (lstm_cell_interleaved.tir).
Cell random_cell(int64_t B, int64_t I, int64_t H, bool interleaved, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  const int64_t T = H / 64;
  const std::vector<std::vector<int64_t>> shapes =
      interleaved ? std::vector<std::vector<int64_t>>{{B, I},      {B, H},   {B, H}, {T, 256, I},
                                                      {T, 256, H}, {T, 256}, {B, H}, {B, H}}
                  : std::vector<std::vector<int64_t>>{{B, I},    {B, H}, {B, H}, {4, H, I},
                                                      {4, H, H}, {4, H}, {B, H}, {B, H}};
  Cell cell;
  for (const auto& shape : shapes) {
    HostTensor t(ir::ScalarKind::f16, shape);
    for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, real(rng));  // outputs: poisoned too
    cell.args.push_back(std::move(t));
  }
  return cell;
}

// Gates summed as the kernel does: x's K blocks first, then h's, each product in f32 from +0.
void reference(const Cell& cell, int64_t B, int64_t I, int64_t H, bool interleaved,
               std::vector<float>& c_out, std::vector<float>& h_out) {
  // The weight row (and bias element) of gate q for state column n.
  auto row = [&](int q, int64_t n) {
    return interleaved ? (n / 64) * 256 + q * 64 + n % 64 : q * H + n;
  };
  const HostTensor &x = cell.args[0], &h = cell.args[1], &c = cell.args[2], &wx = cell.args[3],
                   &wh = cell.args[4], &b = cell.args[5];
  c_out.assign(B * H, 0.0f);
  h_out.assign(B * H, 0.0f);
  for (int64_t m = 0; m < B; ++m) {
    for (int64_t n = 0; n < H; ++n) {
      float g[4];
      for (int q = 0; q < 4; ++q) {
        float acc = 0.0f;
        for (int64_t k = 0; k < I; ++k)
          acc = acc + static_cast<float>(x.get_float(m * I + k)) *
                          static_cast<float>(wx.get_float(row(q, n) * I + k));
        for (int64_t k = 0; k < H; ++k)
          acc = acc + static_cast<float>(h.get_float(m * H + k)) *
                          static_cast<float>(wh.get_float(row(q, n) * H + k));
        g[q] = acc + static_cast<float>(b.get_float(row(q, n)));
      }
      const float i = sigmoid(g[0]), f = sigmoid(g[1]), gg = std::tanh(g[2]), o = sigmoid(g[3]);
      const float c1 = f * static_cast<float>(c.get_float(m * H + n)) + i * gg;
      c_out[m * H + n] = round_f16(c1);
      h_out[m * H + n] = round_f16(o * std::tanh(c1));
    }
  }
}

int64_t mismatches(const HostTensor& got, const std::vector<float>& want, const char* what) {
  int64_t bad = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    if (static_cast<float>(got.get_float(i)) != want[i] && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got.get_float(i) << ", reference " << want[i];
  }
  return bad;
}

// `pins` go on the block_grid (e.g. "overlap_epilogue = true").
void check(bool lowered, std::map<std::string, int64_t> sizes, const char* schedule,
           bool interleaved = false, const std::string& pins = "") {
  const int64_t B = sizes["B"], I = sizes["I"], H = sizes["H"];
  const std::string name = interleaved ? "lstm_cell_interleaved" : "lstm_cell";
  SCOPED_TRACE(name + (lowered ? " lowered" : " as written") + " B = " + std::to_string(B) +
               " I = " + std::to_string(I) + " H = " + std::to_string(H) + " " + schedule + " " +
               pins);
  std::string text = examples::lowered_kernels().at(name);
  if (!pins.empty()) text = testing::pin_block_grid(text, pins);
  auto module = ir::parse_module(text, name + ".tir");
  ir::verify(*module);
  if (lowered) pipeline::lower(*module);
  if (interleaved) sizes["T"] = H / 64;
  Cell cell = random_cell(B, I, H, interleaved, 20261126 + B + I + H);
  std::vector<interp::Argument> args;
  for (auto& t : cell.args) args.push_back(&t);
  interp::RunOptions options;
  options.sizes = sizes;
  options.sm_count = 2;
  options.schedule = interp::Schedule::parse(schedule);
  interp::interpret(*module->kernels.front(), args, options);
  std::vector<float> c_want, h_want;
  reference(cell, B, I, H, interleaved, c_want, h_want);
  EXPECT_EQ(mismatches(cell.args[6], c_want, "c_out"), 0);
  EXPECT_EQ(mismatches(cell.args[7], h_want, "h_out"), 0);
}

// Ragged B and H (partial tiles; H not a multiple of 64, so a gate's weight tile runs past H: the
// next gate's rows must not leak in), I of one partial K block and of several.
TEST(LstmCell, MatchesPlainLoopsBitForBit) {
  for (bool lowered : {false, true}) {
    check(lowered, {{"B", 130}, {"I", 72}, {"H", 72}}, "round-robin");
    check(lowered, {{"B", 5}, {"I", 8}, {"H", 136}}, "random:3");
  }
  check(true, {{"B", 200}, {"I", 136}, {"H", 64}}, "producer-first");
  check(true, {{"B", 64}, {"I", 64}, {"H", 128}}, "consumer-first");
}

// The gate-interleaved kernel (one [128,256] accumulator sliced into the gates): H a multiple of
// 64, B and I ragged; on 2 SMs each block walks several tiles through the shared ring.
TEST(LstmCell, InterleavedMatchesPlainLoopsBitForBit) {
  for (bool lowered : {false, true})
    check(lowered, {{"B", 130}, {"I", 72}, {"H", 128}}, "random:7", true);
  check(true, {{"B", 5}, {"I", 136}, {"H", 64}}, "producer-first", true);
  check(true, {{"B", 200}, {"I", 8}, {"H", 192}}, "consumer-first", true);
}

// overlap-epilogue with two output tiles (c' and h', pinned): each tile's stores run during the
// next tile's recurrent K blocks (two tiles a block on 2 SMs), or before them where that loop has
// fewer K blocks than parts (H = 64: one) — bit for bit as the plain loops.
TEST(LstmCell, InterleavedOverlappedStoresMatchPlainLoopsBitForBit) {
  check(true, {{"B", 130}, {"I", 72}, {"H", 128}}, "random:7", true, "overlap_epilogue = true");
  check(true, {{"B", 130}, {"I", 72}, {"H", 128}}, "consumer-first", true,
        "overlap_epilogue = true");
  check(true, {{"B", 400}, {"I", 8}, {"H", 64}}, "producer-first", true, "overlap_epilogue = true");
}

// On sm_90a: the second mainloop accumulates into the first one's registers (no copy, no second
// set of four accumulators), the sigmoids make no slow-path division calls, at most a register
// spills, and no wgmma is serialized.
TEST(LstmCell, Sm90aKeepsFourAccumulatorsInPlace) {
  auto module = ir::parse_module(examples::lowered_kernels().at("lstm_cell"), "lstm_cell.tir");
  CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
  const std::string& cuda = kernel.cuda_source();
  EXPECT_EQ(cuda.find("ai_1"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("(k_3 != 0) || (0 < tiles_i)"), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("1.0f / (1.0f + expf"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("float new_[32];"), std::string::npos) << cuda;  // %new, a C++ keyword
  const std::string log = testing::ptxas_report(cuda);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C751"), std::string::npos) << log;
  // One register's worth around the epilogue's tanhf at most (ptxas 13.0: 4 bytes).
  const size_t spill = log.find(" bytes spill stores");
  ASSERT_NE(spill, std::string::npos) << log;
  const size_t from = log.rfind(' ', spill - 1) + 1;
  EXPECT_LE(std::stoi(log.substr(from, spill - from)), 8) << log;
}

// `sigmoid {approx}` and `tanh {approx}` (the interleaved cell's gate math as
// bench/kernel-variants/lstm/lstm_cell_interleaved_approx.tir writes it): the hardware's tanh
// approximation in place of expf and tanhf, no spills, no wgmma serialized. The interpreter
// computes the exact functions: the variant interprets bit for bit as the example does.
TEST(LstmCell, ApproxGateMathIsOneTanhEach) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) +
                   "/bench/kernel-variants/lstm/lstm_cell_interleaved_approx.tir");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  auto module = ir::parse_module(text.str(), "lstm_cell_interleaved_approx.tir");
  ir::verify(*module);
  CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
  const std::string& cuda = kernel.cuda_source();
  EXPECT_NE(cuda.find("tessel::device::sigmoid_approx("), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("tessel::device::tanh_approx("), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("tanhf("), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("expf("), std::string::npos) << cuda;
  const std::string log = testing::ptxas_report(cuda);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C751"), std::string::npos) << log;
  EXPECT_NE(log.find(" 0 bytes spill stores"), std::string::npos) << log;
}

}  // namespace
}  // namespace tessel
