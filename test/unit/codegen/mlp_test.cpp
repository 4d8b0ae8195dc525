// A two-layer MLP as one tile program, Graphene's fused chain (§6, N = K <= 128): Y = relu(X W1^T
// + b1) W2^T + b2, one block per 128 rows, the hidden tile never leaving the block (f16 in
// registers, the A operand of the second mma). In the interpreter, against plain loops bit for
// bit. Not yet compiled for sm_90a: the second mma takes A from registers (wgmma's RS form, which
// the emitter does not produce yet), and staged through shared memory instead (an `alloc` written
// by the consumer) synthesis picks mma.sync for it and warp-specialize then leaves that loop alone.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tessel {
namespace {

using interp::HostTensor;

const char* kMlp = R"(
kernel @mlp2[M, D, F, E](%X: global<f16>[M,D], %W1: global<f16>[F,D], %b1: global<f16>[F], %W2: global<f16>[E,F], %b2: global<f16>[E], %Y: global<f16>[M,E]) facts(D % 8 == 0) {
  %M = size {name = M} : index
  %D = size {name = D} : index
  %c128 = const {value = 128} : index
  %c64 = const {value = 64} : index
  %c0 = const {value = 0} : index
  %c1 = const {value = 1} : index
  %tiles_m = cdiv %M, %c128 : index
  %bm = block_grid %tiles_m : index
  %zero = fill {value = 0.0} : register<f32>[128,128]
  %tiles_k = cdiv %D, %c64 : index
  %acc = for %k = %c0 to %tiles_k step %c1 iter(%a = %zero) : register<f32>[128,128] {
    %x_tile = tile %X, %bm, %k {masked, pad = 0.0, shape = [128,64]} : global<f16>[128,64]
    %sx = copy %x_tile : shared<f16>[128,64]
    %w_tile = tile %W1, %c0, %k {masked, pad = 0.0, shape = [128,64]} : global<f16>[128,64]
    %sw = copy %w_tile : shared<f16>[128,64]
    %swt = transpose %sw : shared<f16>[64,128]
    %a_next = mma %sx, %swt, %a : register<f32>[128,128]
    yield %a_next
  }
  %b1_tile = tile %b1, %c0 {masked, pad = 0.0, shape = [128]} : global<f16>[128]
  %rb1 = copy %b1_tile : register<f16>[128]
  %fb1 = cast %rb1 : register<f32>[128]
  %b1_rows = broadcast %fb1 {dims = [0]} : register<f32>[128,128]
  %pre = add %acc, %b1_rows : register<f32>[128,128]
  %f0 = const {value = 0.0} : f32
  %act = max %pre, %f0 : register<f32>[128,128]
  %hid = cast %act : register<f16>[128,128]
  %w2_tile = tile %W2, %c0, %c0 {masked, pad = 0.0, shape = [128,128]} : global<f16>[128,128]
  %sw2 = copy %w2_tile : shared<f16>[128,128]
  %sw2t = transpose %sw2 : shared<f16>[128,128]
  %zero2 = fill {value = 0.0} : register<f32>[128,128]
  %acc2 = mma %hid, %sw2t, %zero2 : register<f32>[128,128]
  %b2_tile = tile %b2, %c0 {masked, pad = 0.0, shape = [128]} : global<f16>[128]
  %rb2 = copy %b2_tile : register<f16>[128]
  %fb2 = cast %rb2 : register<f32>[128]
  %b2_rows = broadcast %fb2 {dims = [0]} : register<f32>[128,128]
  %y = add %acc2, %b2_rows : register<f32>[128,128]
  %out = cast %y : register<f16>[128,128]
  %Y_tile = tile %Y, %bm, %c0 {masked, pad = 0.0, shape = [128,128]} : global<f16>[128,128]
  copy %out, %Y_tile
}
)";

float round_f16(float x) {
  return static_cast<float>(static_cast<_Float16>(x));
}

// F and E up to 128 (one tile of the hidden and output features); M and D ragged.
TEST(FusedMlp, MatchesPlainLoopsBitForBit) {
  auto module = ir::parse_module(kMlp, "mlp2.tir");
  ir::verify(*module);
  for (auto [M, D, F, E] : std::vector<std::array<int64_t, 4>>{
           {130, 72, 128, 128}, {5, 136, 96, 64}, {256, 64, 128, 40}}) {
    SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(D) + "x" + std::to_string(F) + "x" +
                 std::to_string(E));
    std::mt19937_64 rng(M + D + F + E);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::vector<HostTensor> t;
    for (std::vector<int64_t> shape :
         std::vector<std::vector<int64_t>>{{M, D}, {F, D}, {F}, {E, F}, {E}, {M, E}}) {
      HostTensor h(ir::ScalarKind::f16, shape);
      for (int64_t i = 0; i < h.size(); ++i) h.set_float(i, real(rng));  // Y: poisoned too
      t.push_back(std::move(h));
    }
    std::vector<interp::Argument> args;
    for (auto& h : t) args.push_back(&h);
    interp::RunOptions options;
    options.sizes = {{"M", M}, {"D", D}, {"F", F}, {"E", E}};
    interp::interpret(*module->kernels.front(), args, options);
    int64_t bad = 0, clamped = 0;
    for (int64_t m = 0; m < M; ++m) {
      std::vector<float> hid(F);
      for (int64_t f = 0; f < F; ++f) {
        float acc = 0.0f;
        for (int64_t d = 0; d < D; ++d)
          acc = acc + static_cast<float>(t[0].get_float(m * D + d)) *
                          static_cast<float>(t[1].get_float(f * D + d));
        const float pre = acc + static_cast<float>(t[2].get_float(f));
        clamped += pre < 0;
        hid[f] = round_f16(std::fmax(pre, 0.0f));
      }
      for (int64_t e = 0; e < E; ++e) {
        float acc = 0.0f;
        for (int64_t f = 0; f < F; ++f)
          acc = acc + hid[f] * static_cast<float>(t[3].get_float(e * F + f));
        const float want = round_f16(acc + static_cast<float>(t[4].get_float(e)));
        const float got = static_cast<float>(t[5].get_float(m * E + e));
        if (got != want && bad++ < 5)
          ADD_FAILURE() << "Y[" << m << "," << e << "] = " << got << ", reference " << want;
      }
    }
    EXPECT_EQ(bad, 0);
    EXPECT_GT(clamped, 10);  // the ReLU clamps
  }
}

}  // namespace
}  // namespace tessel
