// The fused multi-layer perceptron (examples/kernels/mlp.tir, Graphene §6 with N = K = 128: every
// layer relu(h W_l^T + b_l), the block's 128 rows of each intermediate in registers as the next
// layer's wgmma A operand): in the interpreter as written and lowered by the default pipeline
// (roles interleaved; few SMs, so that one block walks several row tiles through the weight ring),
// against plain loops bit for bit; and its CUDA for sm_90a: the layers after the first take A
// from registers (wgmma's RS form), the intermediate never touches shared memory, no spills.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
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

namespace tessel {
namespace {

using interp::HostTensor;

constexpr int64_t kWidth = 128;

float round_f16(float x) {
  return static_cast<float>(static_cast<_Float16>(x));
}

void check(bool lowered, int64_t M, int64_t L, const char* schedule) {
  SCOPED_TRACE(std::string(lowered ? "lowered" : "as written") + " M = " + std::to_string(M) +
               " L = " + std::to_string(L) + " " + schedule);
  auto module = ir::parse_module(examples::lowered_kernels().at("mlp"), "mlp.tir");
  ir::verify(*module);
  if (lowered) pipeline::lower(*module);
  std::mt19937_64 rng(20261126 + M * 31 + L);
  // Weights of the scale that keeps activations O(1) through the layers (He), so that the ReLU
  // clamps about half of every layer and f16 neither overflows nor flushes.
  std::uniform_real_distribution<double> unit(-1.0, 1.0), weight(-0.2, 0.2);
  std::vector<HostTensor> t;
  const std::vector<std::vector<int64_t>> shapes{
      {M, kWidth}, {L, kWidth, kWidth}, {L, kWidth}, {M, kWidth}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    HostTensor h(ir::ScalarKind::f16, shapes[i]);
    for (int64_t e = 0; e < h.size(); ++e) h.set_float(e, i == 1 ? weight(rng) : unit(rng));
    t.push_back(std::move(h));  // Y: poisoned with random values too
  }
  std::vector<interp::Argument> args;
  for (auto& h : t) args.push_back(&h);
  interp::RunOptions options;
  options.sizes = {{"M", M}, {"L", L}};
  options.sm_count = 2;
  options.schedule = interp::Schedule::parse(schedule);
  interp::interpret(*module->kernels.front(), args, options);
  int64_t bad = 0, clamped = 0, nonzero = 0;
  for (int64_t m = 0; m < M; ++m) {
    std::vector<float> h(kWidth), next(kWidth);
    for (int64_t k = 0; k < kWidth; ++k) h[k] = static_cast<float>(t[0].get_float(m * kWidth + k));
    for (int64_t l = 0; l < L; ++l) {
      for (int64_t n = 0; n < kWidth; ++n) {
        float acc = 0.0f;  // the mma's order: k ascending, from +0
        for (int64_t k = 0; k < kWidth; ++k)
          acc = acc + h[k] * static_cast<float>(t[1].get_float((l * kWidth + n) * kWidth + k));
        const float pre = acc + static_cast<float>(t[2].get_float(l * kWidth + n));
        clamped += pre < 0;
        next[n] = round_f16(std::fmax(pre, 0.0f));
      }
      h.swap(next);
    }
    for (int64_t n = 0; n < kWidth; ++n) {
      const float got = static_cast<float>(t[3].get_float(m * kWidth + n));
      nonzero += h[n] != 0.0f;
      if (got != h[n] && bad++ < 5)
        ADD_FAILURE() << "Y[" << m << "," << n << "] = " << got << ", reference " << h[n];
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(clamped, M * L * kWidth / 4);  // the ReLU clamps in every layer ...
  EXPECT_GT(nonzero, M * kWidth / 4);      // ... and the output is not all clamped
}

// Ragged M (a partial last row tile), one layer (the layer loop runs zero times), several layers;
// lowered, on 2 SMs, each block walks several row tiles and the 4-slot weight ring wraps.
TEST(FusedMlp, MatchesPlainLoopsBitForBit) {
  for (bool lowered : {false, true}) check(lowered, 130, 3, "round-robin");
  check(true, 5, 1, "producer-first");
  check(true, 300, 6, "consumer-first");
  check(true, 257, 2, "random:5");
}

// On sm_90a: the first layer reads X from shared memory (SS), the others their A operand from
// the previous layer's registers (RS); nothing but the output is staged through shared memory,
// and nothing spills.
TEST(FusedMlp, Sm90aKeepsTheIntermediateInRegisters) {
  auto module = ir::parse_module(examples::lowered_kernels().at("mlp"), "mlp.tir");
  CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
  const std::string& cuda = kernel.cuda_source();
  EXPECT_NE(cuda.find("mma: wgmma.m64n128k16.f32.f16.ss"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("mma: wgmma.m64n128k16.f32.f16.rs"), std::string::npos) << cuda;
  // The output's two 128x64 halves, 4 stmatrix.x4 per warp each: the only shared-memory stores.
  size_t stores = 0;
  for (size_t at = cuda.find("stmatrix_x4("); at != std::string::npos;
       at = cuda.find("stmatrix_x4(", at + 1))
    ++stores;
  EXPECT_EQ(stores, 8u) << cuda;
  const std::string log = testing::ptxas_report(cuda);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C751"), std::string::npos) << log;  // no serialized wgmma
  EXPECT_NE(log.find(" 0 bytes spill stores"), std::string::npos) << log;
}

}  // namespace
}  // namespace tessel
