// The GEMM-with-epilogue example kernels (examples/kernels/gemm_bias_relu.tir, dual_gemm.tir) in
// the interpreter: random inputs, ragged sizes (partial tiles in M, N and K), compared bit for bit
// with plain C++ loops that compute in the interpreter's documented order (interp/interpreter.h:
// mma sums k in order from the accumulator's +0 in f32, elementwise ops in f32, casts round to
// nearest even). Also: their text round-trips before and after lowering, and synthesis maps them
// onto TMA + wgmma with a register-local bias broadcast (what the emitter's epilogue relies on).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <tuple>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

using interp::HostTensor;
using ir::ScalarKind;

std::unique_ptr<ir::Module> parse_example(const std::string& name) {
  return ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
}

// f32 -> f16 -> f32 by the compiler's own _Float16 (round to nearest even), not the interpreter's.
float round_f16(float x) {
  return static_cast<float>(static_cast<_Float16>(x));
}

HostTensor random_tensor(std::mt19937& rng, ScalarKind k, std::vector<int64_t> shape) {
  HostTensor t(k, std::move(shape));
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, dist(rng));
  return t;
}

// A value no correct kernel writes, in every element of an output before the run.
void poison(HostTensor& t) {
  for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, 12345.0);
}

// P[m,n] = sum_k A[m,k] B[n,k] in f32, k in order, from +0 (the interpreter's mma order).
std::vector<float> products(const HostTensor& A, const HostTensor& B, int64_t M, int64_t N,
                            int64_t K) {
  std::vector<float> p(M * N);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        acc = acc + static_cast<float>(A.get_float(m * K + k)) *
                        static_cast<float>(B.get_float(n * K + k));
      }
      p[m * N + n] = acc;
    }
  }
  return p;
}

int64_t count_mismatches(const HostTensor& got, const std::vector<float>& want,
                         const std::string& what) {
  EXPECT_EQ(got.size(), static_cast<int64_t>(want.size()));
  int64_t bad = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.get_float(i);
    bool same = (std::isnan(g) && std::isnan(want[i])) ||
                (g == want[i] && std::signbit(g) == std::signbit(want[i]));
    if (!same && bad++ < 5)
      ADD_FAILURE() << what << " element " << i << " = " << g << ", reference " << want[i];
  }
  return bad;
}

// (M, N, K): ragged in every dimension against the 128x256x64 / 128x128x64 tiles, a single
// partial tile, more than one tile in M and N, and a K that is a multiple of 8 (the kernels' fact)
// but not of 64.
const std::vector<std::tuple<int64_t, int64_t, int64_t>> kSizes = {
    {1, 1, 8}, {37, 300, 72}, {130, 129, 64}, {200, 520, 136}};

TEST(GemmBiasRelu, MatchesPlainLoopsBitForBitOnRaggedSizes) {
  auto module = parse_example("gemm_bias_relu");
  ir::verify(*module);
  std::mt19937 rng(20261122);
  int64_t negative = 0, positive = 0;
  for (auto [M, N, K] : kSizes) {
    HostTensor A = random_tensor(rng, ScalarKind::f16, {M, K});
    HostTensor B = random_tensor(rng, ScalarKind::f16, {N, K});
    HostTensor bias = random_tensor(rng, ScalarKind::f16, {N});
    HostTensor C(ScalarKind::f16, {M, N});
    poison(C);
    interp::interpret(*module->kernels.front(), {&A, &B, &bias, &C},
                      {{{"M", M}, {"N", N}, {"K", K}}, {}});
    std::vector<float> ref = products(A, B, M, N, K);
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        float h = ref[m * N + n] + static_cast<float>(bias.get_float(n));
        (h < 0 ? negative : positive) += 1;
        ref[m * N + n] = round_f16(std::fmax(h, 0.0f));
      }
    }
    EXPECT_EQ(count_mismatches(C, ref, "C"), 0) << M << "x" << N << "x" << K;
  }
  EXPECT_GT(negative, 100);  // the ReLU clamps
  EXPECT_GT(positive, 100);  // and passes
}

TEST(DualGemm, MatchesPlainLoopsBitForBitOnRaggedSizes) {
  auto module = parse_example("dual_gemm");
  ir::verify(*module);
  std::mt19937 rng(11222026);
  for (auto [M, N, K] : kSizes) {
    HostTensor A = random_tensor(rng, ScalarKind::f16, {M, K});
    HostTensor B0 = random_tensor(rng, ScalarKind::f16, {N, K});
    HostTensor B1 = random_tensor(rng, ScalarKind::f16, {N, K});
    HostTensor D(ScalarKind::f16, {M, N});
    poison(D);
    interp::interpret(*module->kernels.front(), {&A, &B0, &B1, &D},
                      {{{"M", M}, {"N", N}, {"K", K}}, {}});
    std::vector<float> gate = products(A, B0, M, N, K), up = products(A, B1, M, N, K);
    std::vector<float> ref(M * N);
    for (int64_t i = 0; i < M * N; ++i) {
      float g = gate[i];
      float sig = 1.0f / (1.0f + std::exp(-g));  // float expf, as the interpreter's sigmoid
      float silu = g * sig;
      ref[i] = round_f16(silu * up[i]);
    }
    EXPECT_EQ(count_mismatches(D, ref, "D"), 0) << M << "x" << N << "x" << K;
  }
}

// The reference above is not vacuous: swapping the gate and the up projection changes the result.
TEST(DualGemm, GateAndUpAreNotInterchangeable) {
  auto module = parse_example("dual_gemm");
  std::mt19937 rng(7);
  const int64_t M = 9, N = 11, K = 16;
  HostTensor A = random_tensor(rng, ScalarKind::f16, {M, K});
  HostTensor B0 = random_tensor(rng, ScalarKind::f16, {N, K});
  HostTensor B1 = random_tensor(rng, ScalarKind::f16, {N, K});
  HostTensor D(ScalarKind::f16, {M, N}), E(ScalarKind::f16, {M, N});
  interp::interpret(*module->kernels.front(), {&A, &B0, &B1, &D},
                    {{{"M", M}, {"N", N}, {"K", K}}, {}});
  interp::interpret(*module->kernels.front(), {&A, &B1, &B0, &E},
                    {{{"M", M}, {"N", N}, {"K", K}}, {}});
  int64_t differ = 0;
  for (int64_t i = 0; i < M * N; ++i) differ += D.get_float(i) != E.get_float(i);
  EXPECT_GT(differ, M * N / 2);
}

TEST(GemmEpilogueKernels, TextRoundTripsBeforeAndAfterLowering) {
  for (const char* name : {"gemm_bias_relu", "dual_gemm"}) {
    auto module = parse_example(name);
    std::string text = ir::print(*module);
    auto again = ir::parse_module(text, "again.tir");
    ir::verify(*again);
    EXPECT_EQ(ir::print(*again), text) << name;
    pipeline::lower(*module);
    std::string lowered = ir::print(*module);
    auto lowered_again = ir::parse_module(lowered, "lowered.tir");
    ir::verify(*lowered_again);
    EXPECT_EQ(ir::print(*lowered_again), lowered) << name;
  }
}

// What synthesis gives these kernels (the contract the mainloop and epilogue emitters rely on).
std::map<std::string, const ir::Operation*> ops_by_result(const ir::Operation& kernel) {
  std::map<std::string, const ir::Operation*> ops;
  ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
    for (const auto& r : op->results()) ops[r->name()] = op;
  });
  return ops;
}

// What synthesis gives them (the passes up to warp specialization, which then moves these ops
// into roles and lowers the copies into TMA loads on barriers).
pipeline::PipelineOptions synthesis_only() {
  (void)pipeline::lowering_passes();  // registers the passes
  pipeline::PipelineOptions o;
  o.passes = {"verify", "canonicalize", "synthesize-layouts", "synthesize-shared-layouts"};
  return o;
}

TEST(GemmEpilogueKernels, SynthesisMapsThemOntoTmaAndWgmma) {
  auto module = parse_example("gemm_bias_relu");
  pipeline::lower(*module, synthesis_only());
  auto ops = ops_by_result(*module->kernels.front());
  EXPECT_EQ(ops.at("bm")->int_attr("threads"), 256);
  EXPECT_EQ(ops.at("sA")->str_attr("atom"), "tma.load.2d.box128x64.sw128");
  EXPECT_EQ(ops.at("sB")->str_attr("atom"), "tma.load.2d.box256x64.sw128");
  EXPECT_EQ(ops.at("c_next")->str_attr("atom"), "wgmma.m64n256k16.f32.f16.ss");
  const std::string acc = ops.at("c_next")->result()->type().layout();
  EXPECT_EQ(acc, "(((4,8,4),2),(2,2,32)):(((256,1,16),64),(128,8,1024))");
  // The epilogue stays in the accumulator's layout (no rearrange), and the bias vector gets the
  // accumulator's column projection: lane % 4 picks a column pair, rows are a stride-0 mode. So
  // each thread loads the 64 bias columns its accumulator fragment touches, no more.
  for (const char* v : {"bias_rows", "h", "y", "out"}) {
    EXPECT_EQ(ops.at(v)->result()->type().layout(), acc) << v;
  }
  EXPECT_EQ(ops.at("rbias")->result()->type().layout(), "((4,64),(2,32)):((2,0),(1,8))");
  ir::walk(module->kernels.front().get(),
           [&](ir::Operation* op) { EXPECT_NE(op->kind(), ir::OpKind::rearrange); });

  auto dual = parse_example("dual_gemm");
  pipeline::lower(*dual, synthesis_only());
  auto dops = ops_by_result(*dual->kernels.front());
  EXPECT_EQ(dops.at("bm")->int_attr("threads"), 256);
  for (const char* copy : {"sA", "sB0", "sB1"})
    EXPECT_EQ(dops.at(copy)->str_attr("atom"), "tma.load.2d.box128x64.sw128") << copy;
  for (const char* mma : {"g_next", "u_next"}) {
    EXPECT_EQ(dops.at(mma)->str_attr("atom"), "wgmma.m64n128k16.f32.f16.ss") << mma;
    EXPECT_EQ(dops.at(mma)->result()->type().layout(),
              "(((4,8,4),2),(2,2,16)):(((256,1,16),64),(128,8,1024))")
        << mma;
  }
}

// The whole pipeline warp-specializes both: a producer warpgroup before the two consumer ones.
TEST(GemmEpilogueKernels, TheirBlocksAreWarpSpecialized) {
  for (const char* name : {"gemm_bias_relu", "dual_gemm"}) {
    SCOPED_TRACE(name);
    auto module = parse_example(name);
    pipeline::lower(*module);
    int roles = 0;
    ir::walk(module->kernels.front().get(), [&](ir::Operation* op) {
      if (op->kind() == ir::OpKind::block_grid) {
        EXPECT_EQ(op->int_attr("threads"), 384);
      }
      if (op->kind() != ir::OpKind::warp_group) return;
      EXPECT_EQ(op->int_attr("threads"), roles == 0 ? 128 : 256);
      EXPECT_EQ(op->str_attr("role"), roles == 0 ? "producer" : "consumer");
      ++roles;
    });
    EXPECT_EQ(roles, 2);
  }
}

// Every warp-specialized example, as the default pipeline leaves it (roles, barriers, persistent
// tile loops, staged TMA stores), run by the interpreter with its roles interleaved under several
// schedules, computes what the tile program computes, bit for bit: the oracle for the passes.
// N = 300 takes the copy out of the staging buffer by hand (rows TMA cannot store), N = 264 the
// TMA stores; K = 200 and 136 are below one ring of 4 slots of 64 and not multiples of 64.
TEST(WarpSpecializedExamples, MatchTheTileProgramUnderEverySchedule) {
  for (const std::map<std::string, int64_t>& sizes :
       {std::map<std::string, int64_t>{{"M", 257}, {"N", 300}, {"K", 200}},
        std::map<std::string, int64_t>{{"M", 129}, {"N", 264}, {"K", 136}}})
    for (const char* name : {"gemm", "gemm_bf16", "gemm_bias_relu", "dual_gemm"}) {
      SCOPED_TRACE(name + std::string(" N = ") + std::to_string(sizes.at("N")));
      auto plain = parse_example(name);
      auto lowered = parse_example(name);
      pipeline::lower(*lowered);
      bool roles = false;
      ir::walk(lowered->kernels.front().get(),
               [&](ir::Operation* op) { roles = roles || op->kind() == ir::OpKind::warp_group; });
      ASSERT_TRUE(roles) << "not warp-specialized";
      // Fresh random inputs; every tensor starts random, so an output element nobody writes keeps
      // a value the other run does not have.
      auto make_args = [&](const ir::Operation& kernel, std::vector<interp::HostTensor>& store) {
        std::mt19937_64 rng(42);
        std::uniform_real_distribution<double> real(-1.0, 1.0);
        for (const auto& arg : kernel.region(0)->arguments()) {
          interp::HostTensor t(arg->type().element(), interp::concrete_shape(arg->type(), sizes));
          for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, real(rng));
          store.push_back(std::move(t));
        }
        std::vector<interp::Argument> args;
        for (auto& t : store) args.push_back(&t);
        return args;
      };
      std::vector<interp::HostTensor> want;
      interp::RunOptions options;
      options.sizes = sizes;
      auto want_args = make_args(*plain->kernels.front(), want);
      interp::interpret(*plain->kernels.front(), want_args, options);
      for (const char* schedule : {"round-robin", "producer-first", "consumer-first", "random:7"}) {
        SCOPED_TRACE(schedule);
        std::vector<interp::HostTensor> got;
        auto args = make_args(*lowered->kernels.front(), got);
        options.schedule = interp::Schedule::parse(schedule);
        interp::interpret(*lowered->kernels.front(), args, options);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i].bytes() == want[i].bytes()) << i;
      }
    }
}

}  // namespace
}  // namespace tessel
