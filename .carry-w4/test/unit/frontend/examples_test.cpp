// Every example kernel runs in the interpreter on random inputs with ragged sizes and matches an
// independent C++ reference: bit for bit where the reference computes in the same order (the
// interpreter's documented semantics), within a tolerance against float64 otherwise. Each kernel's
// IR text also round-trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tile/kernels.h"

namespace tessel::examples {
namespace {

using interp::HostTensor;

// ---- an independent reference for rounding (not the interpreter's numerics) ----

uint16_t bf16_bits(float f) {  // the classic bit trick: round to nearest even on the top 16 bits
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return 0x7FC0;
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
float bf16_value(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// E4M3FN by brute force: the nearest of the 126 positive finite values, ties to the even code,
// saturating at 448.
float e4m3_value(int code) {
  int e = (code >> 3) & 0xF, m = code & 7;
  float v = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
  return (code & 0x80) ? -v : v;
}
float round_e4m3(float x) {
  float a = std::fabs(x);
  int best = 0;
  for (int c = 1; c <= 0x7E; ++c) {
    float d = std::fabs(e4m3_value(c) - a), bd = std::fabs(e4m3_value(best) - a);
    if (d < bd || (d == bd && c % 2 == 0)) best = c;
  }
  return std::copysign(e4m3_value(best), x);
}

float ref_round(ScalarKind k, float x) {
  switch (k) {
    case ScalarKind::f16:
      return static_cast<float>(static_cast<_Float16>(x));
    case ScalarKind::bf16:
      return bf16_value(bf16_bits(x));
    case ScalarKind::f8e4m3:
      return round_e4m3(x);
    case ScalarKind::f32:
      return x;
    default:
      ADD_FAILURE() << "no reference rounding for " << ir::to_string(k);
      return x;
  }
}

// ---- data ----

struct Data {
  std::mt19937 rng{20251122};
  HostTensor make(ScalarKind k, std::vector<int64_t> shape, double lo = -1, double hi = 1) {
    HostTensor t(k, std::move(shape));
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < t.size(); ++i) {
      if (ir::is_float(k)) {
        t.set_float(i, dist(rng));
      } else {
        t.set_int(i, static_cast<int64_t>(rng() % 16) - 8);
      }
    }
    return t;
  }
};

// The poison every output starts as, so that an element the kernel never writes shows up.
void poison(HostTensor& t) {
  for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, 12345.0);
}

void expect_bits(const HostTensor& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  int64_t bad = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.get_float(i);
    bool same = (std::isnan(g) && std::isnan(want[i])) ||
                (g == want[i] && std::signbit(g) == std::signbit(want[i]));
    if (!same && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << g << ", reference " << want[i];
  }
  EXPECT_EQ(bad, 0) << what;
}

void expect_roundtrip(const TileKernel& k) {
  std::string text = k.text();
  auto again = ir::parse_module(text, "example");
  ir::verify(*again);
  EXPECT_EQ(ir::print(*again), text);
}

// C[m,n] = Σ_k A[m,k]·B[n,k] in f32, k in order, from +0.
std::vector<float> gemm_ref(const HostTensor& A, const HostTensor& B, int64_t M, int64_t N,
                            int64_t K, int64_t a_off = 0, int64_t b_off = 0) {
  std::vector<float> c(M * N);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        acc = acc + static_cast<float>(A.get_float(a_off + m * K + k)) *
                        static_cast<float>(B.get_float(b_off + n * K + k));
      }
      c[m * N + n] = acc;
    }
  }
  return c;
}

class GemmTest : public ::testing::TestWithParam<ScalarKind> {};

TEST_P(GemmTest, MatchesTheReferenceBitForBitOnRaggedSizes) {
  ScalarKind in = GetParam();
  bool fp8 = in == ScalarKind::f8e4m3 || in == ScalarKind::f8e5m2;
  ScalarKind out = fp8 ? ScalarKind::f16 : in;
  TileKernel k = gemm(in, out, {32, 32, 16});
  expect_roundtrip(k);
  for (auto [M, N, K] : {std::tuple{45, 37, 40}, std::tuple{64, 32, 16}, std::tuple{1, 70, 3}}) {
    Data d;
    HostTensor A = d.make(in, {M, K}), B = d.make(in, {N, K}), C(out, {M, N});
    poison(C);
    interp::interpret(k.op(), {&A, &B, &C}, {{{"M", M}, {"N", N}, {"K", K}}, {}});
    std::vector<float> ref = gemm_ref(A, B, M, N, K);
    for (float& v : ref) v = ref_round(out, v);
    expect_bits(C, ref, "C");
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GemmTest,
                         ::testing::Values(ScalarKind::f16, ScalarKind::bf16, ScalarKind::f8e4m3,
                                           ScalarKind::f8e5m2),
                         [](const ::testing::TestParamInfo<ScalarKind>& info) {
                           return std::string(ir::to_string(info.param));
                         });

TEST(Examples, BatchedGemm) {
  TileKernel k = batched_gemm(ScalarKind::f16, {16, 16, 16});
  expect_roundtrip(k);
  const int64_t Bt = 3, M = 20, N = 18, K = 24;
  Data d;
  HostTensor A = d.make(ScalarKind::f16, {Bt, M, K}), B = d.make(ScalarKind::f16, {Bt, N, K});
  HostTensor C(ScalarKind::f16, {Bt, M, N});
  poison(C);
  interp::interpret(k.op(), {&A, &B, &C}, {{{"Bt", Bt}, {"M", M}, {"N", N}, {"K", K}}, {}});
  std::vector<float> ref;
  for (int64_t z = 0; z < Bt; ++z) {
    for (float v : gemm_ref(A, B, M, N, K, z * M * K, z * N * K))
      ref.push_back(ref_round(ScalarKind::f16, v));
  }
  expect_bits(C, ref, "C");
}

TEST(Examples, DualGemm) {
  TileKernel k = dual_gemm(ScalarKind::bf16, {16, 16, 16});
  expect_roundtrip(k);
  const int64_t M = 33, N = 17, K = 20;
  Data d;
  HostTensor A = d.make(ScalarKind::bf16, {M, K}), B1 = d.make(ScalarKind::bf16, {N, K});
  HostTensor B2 = d.make(ScalarKind::bf16, {N, K}), C(ScalarKind::bf16, {M, N});
  poison(C);
  interp::interpret(k.op(), {&A, &B1, &B2, &C}, {{{"M", M}, {"N", N}, {"K", K}}, {}});
  auto c1 = gemm_ref(A, B1, M, N, K), c2 = gemm_ref(A, B2, M, N, K);
  std::vector<float> ref(M * N);
  for (int64_t i = 0; i < M * N; ++i) ref[i] = ref_round(ScalarKind::bf16, c1[i] + c2[i]);
  expect_bits(C, ref, "C");
}

TEST(Examples, GemmWithRowReduction) {
  TileKernel k = gemm_rowsum(ScalarKind::f16, {16, 16, 16});
  expect_roundtrip(k);
  const int64_t M = 30, N = 40, K = 36, bk = 16;
  Data d;
  HostTensor A = d.make(ScalarKind::f16, {M, K}), B = d.make(ScalarKind::f16, {N, K});
  HostTensor C(ScalarKind::f16, {M, N}), R(ScalarKind::f32, {M});
  poison(C);
  poison(R);
  interp::interpret(k.op(), {&A, &B, &C, &R}, {{{"M", M}, {"N", N}, {"K", K}}, {}});
  std::vector<float> ref = gemm_ref(A, B, M, N, K);
  for (float& v : ref) v = ref_round(ScalarKind::f16, v);
  expect_bits(C, ref, "C");
  std::vector<float> rows(M);
  for (int64_t m = 0; m < M; ++m) {
    float r = 0.0f;
    for (int64_t k0 = 0; k0 < K; k0 += bk) {  // a sum per K tile, then accumulated
      float t = static_cast<float>(A.get_float(m * K + k0));
      for (int64_t kk = k0 + 1; kk < std::min(K, k0 + bk); ++kk)
        t = t + static_cast<float>(A.get_float(m * K + kk));
      r = r + t;
    }
    rows[m] = r;
  }
  expect_bits(R, rows, "R");
}

TEST(Examples, GemmBiasRelu) {
  TileKernel k = gemm_bias_relu(ScalarKind::f16, {16, 16, 16});
  expect_roundtrip(k);
  const int64_t M = 21, N = 35, K = 17;
  Data d;
  HostTensor A = d.make(ScalarKind::f16, {M, K}), B = d.make(ScalarKind::f16, {N, K});
  HostTensor bias = d.make(ScalarKind::f16, {N}), C(ScalarKind::f16, {M, N});
  poison(C);
  interp::interpret(k.op(), {&A, &B, &bias, &C}, {{{"M", M}, {"N", N}, {"K", K}}, {}});
  std::vector<float> ref = gemm_ref(A, B, M, N, K);
  int64_t negative = 0;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float v = ref[m * N + n] + static_cast<float>(bias.get_float(n));
      negative += v < 0;
      ref[m * N + n] = ref_round(ScalarKind::f16, std::fmax(v, 0.0f));
    }
  }
  EXPECT_GT(negative, 0);  // the ReLU is exercised
  expect_bits(C, ref, "C");
}

TEST(Examples, Int4GemmWithGroupScales) {
  const int64_t group = 16;
  TileKernel k = gemm_int4(group, {16, 16, group});
  expect_roundtrip(k);
  const int64_t M = 19, N = 23, K = 48, G = K / group;
  Data d;
  HostTensor A = d.make(ScalarKind::f16, {M, K}), W = d.make(ScalarKind::i4, {N, K});
  HostTensor S = d.make(ScalarKind::f16, {N, G}, 0.01, 0.1), C(ScalarKind::f16, {M, N});
  poison(C);
  interp::interpret(k.op(), {&A, &W, &S, &C}, {{{"M", M}, {"N", N}, {"K", K}, {"G", G}}, {}});
  HostTensor Wd(ScalarKind::f16, {N, K});  // dequantized: f16(w · s), the product in f32
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t kk = 0; kk < K; ++kk) {
      float w = static_cast<float>(W.get_int(n * K + kk)) *
                static_cast<float>(S.get_float(n * G + kk / group));
      Wd.set_float(n * K + kk, static_cast<float>(static_cast<_Float16>(w)));
    }
  }
  std::vector<float> ref = gemm_ref(A, Wd, M, N, K);
  for (float& v : ref) v = ref_round(ScalarKind::f16, v);
  expect_bits(C, ref, "C");
}

TEST(Examples, Gemv) {
  const int64_t bm = 16, bk = 32;
  TileKernel k = gemv(ScalarKind::bf16, bm, bk);
  expect_roundtrip(k);
  const int64_t M = 37, K = 70;
  Data d;
  HostTensor A = d.make(ScalarKind::bf16, {M, K}), x = d.make(ScalarKind::bf16, {K});
  HostTensor y(ScalarKind::f32, {M});
  poison(y);
  interp::interpret(k.op(), {&A, &x, &y}, {{{"M", M}, {"K", K}}, {}});
  std::vector<float> ref(M);
  for (int64_t m = 0; m < M; ++m) {
    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < K; k0 += bk) {
      auto p = [&](int64_t kk) {
        return static_cast<float>(A.get_float(m * K + kk)) * static_cast<float>(x.get_float(kk));
      };
      float t = p(k0);
      for (int64_t kk = k0 + 1; kk < std::min(K, k0 + bk); ++kk) t = t + p(kk);
      acc = acc + t;
    }
    ref[m] = acc;
  }
  expect_bits(y, ref, "y");
}

// Per-row reductions over column tiles of bn, in the interpreter's order: a fold per tile, then
// the tiles folded in order.
template <typename Elem, typename Fold>
float tiled_fold(int64_t n, int64_t bn, float init, Elem elem, Fold fold) {
  float acc = init;
  for (int64_t c0 = 0; c0 < n; c0 += bn) {
    float t = elem(c0);
    for (int64_t c = c0 + 1; c < std::min(n, c0 + bn); ++c) t = fold(t, elem(c));
    acc = fold(acc, t);
  }
  return acc;
}

TEST(Examples, Softmax) {
  const int64_t bm = 8, bn = 16;
  TileKernel k = softmax(ScalarKind::f16, bm, bn);
  expect_roundtrip(k);
  for (auto [M, N] : {std::pair{13, 40}, std::pair{8, 16}, std::pair{3, 5}}) {
    Data d;
    HostTensor X = d.make(ScalarKind::f16, {M, N}, -4, 4), Y(ScalarKind::f16, {M, N});
    poison(Y);
    interp::interpret(k.op(), {&X, &Y}, {{{"M", M}, {"N", N}}, {}});
    std::vector<float> ref(M * N);
    for (int64_t r = 0; r < M; ++r) {
      auto x = [&](int64_t c) { return static_cast<float>(X.get_float(r * N + c)); };
      float m = tiled_fold(N, bn, -INFINITY, x, [](float a, float b) { return std::fmax(a, b); });
      float s = tiled_fold(
          N, bn, 0.0f, [&](int64_t c) { return std::exp(x(c) - m); },
          [](float a, float b) { return a + b; });
      for (int64_t c = 0; c < N; ++c)
        ref[r * N + c] = ref_round(ScalarKind::f16, std::exp(x(c) - m) / s);
    }
    expect_bits(Y, ref, "Y");
  }
}

TEST(Examples, RmsNorm) {
  const int64_t bm = 4, bn = 32;
  TileKernel k = rmsnorm(ScalarKind::bf16, bm, bn);
  expect_roundtrip(k);
  const int64_t M = 10, N = 77;
  const double eps = 1e-5;
  Data d;
  HostTensor X = d.make(ScalarKind::bf16, {M, N}), w = d.make(ScalarKind::bf16, {N});
  HostTensor Y(ScalarKind::bf16, {M, N});
  poison(Y);
  interp::interpret(k.op(), {&X, &w, &Y, eps}, {{{"M", M}, {"N", N}}, {}});
  std::vector<float> ref(M * N);
  for (int64_t r = 0; r < M; ++r) {
    auto x = [&](int64_t c) { return static_cast<float>(X.get_float(r * N + c)); };
    float ss = tiled_fold(
        N, bn, 0.0f, [&](int64_t c) { return x(c) * x(c); },
        [](float a, float b) { return a + b; });
    float rs = 1.0f / std::sqrt(ss / static_cast<float>(N) + static_cast<float>(eps));
    for (int64_t c = 0; c < N; ++c) {
      ref[r * N + c] = ref_round(ScalarKind::bf16, x(c) * rs * static_cast<float>(w.get_float(c)));
    }
  }
  expect_bits(Y, ref, "Y");
}

TEST(Examples, LayerNorm) {
  const int64_t bm = 4, bn = 16;
  TileKernel k = layernorm(ScalarKind::f16, bm, bn);
  expect_roundtrip(k);
  const int64_t M = 6, N = 41;
  const double eps = 1e-5;
  Data d;
  HostTensor X = d.make(ScalarKind::f16, {M, N}, -2, 3), w = d.make(ScalarKind::f16, {N});
  HostTensor bias = d.make(ScalarKind::f16, {N}), Y(ScalarKind::f16, {M, N});
  poison(Y);
  interp::interpret(k.op(), {&X, &w, &bias, &Y, eps}, {{{"M", M}, {"N", N}}, {}});
  std::vector<float> ref(M * N);
  const float n = static_cast<float>(N);
  for (int64_t r = 0; r < M; ++r) {
    auto x = [&](int64_t c) { return static_cast<float>(X.get_float(r * N + c)); };
    auto add = [](float a, float b) { return a + b; };
    float mean = tiled_fold(N, bn, 0.0f, x, add) / n;
    float var = tiled_fold(
                    N, bn, 0.0f, [&](int64_t c) { return (x(c) - mean) * (x(c) - mean); }, add) /
                n;
    float rs = 1.0f / std::sqrt(var + static_cast<float>(eps));
    for (int64_t c = 0; c < N; ++c) {
      float y = (x(c) - mean) * rs * static_cast<float>(w.get_float(c)) +
                static_cast<float>(bias.get_float(c));
      ref[r * N + c] = ref_round(ScalarKind::f16, y);
    }
  }
  expect_bits(Y, ref, "Y");
}

// FlashAttention's online softmax reorders the sums, so it is checked against plain attention in
// float64 within what f16 inputs and outputs allow.
void check_attention(bool causal) {
  const int64_t bm = 16, bn = 16, D = 16;
  TileKernel k = flash_attention(causal, bm, bn, D);
  expect_roundtrip(k);
  const int64_t H = 2, S = 37;
  Data d;
  HostTensor Q = d.make(ScalarKind::f16, {H, S, D}), K = d.make(ScalarKind::f16, {H, S, D});
  HostTensor V = d.make(ScalarKind::f16, {H, S, D}), O(ScalarKind::f16, {H, S, D});
  poison(O);
  interp::interpret(k.op(), {&Q, &K, &V, &O}, {{{"H", H}, {"S", S}}, {}});
  double err = 0, norm = 0;
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i = 0; i < S; ++i) {
      std::vector<double> p(S, 0.0);
      double m = -INFINITY, l = 0;
      int64_t last = causal ? i : S - 1;
      for (int64_t j = 0; j <= last; ++j) {
        double s = 0;
        for (int64_t e = 0; e < D; ++e)
          s += Q.get_float((h * S + i) * D + e) * K.get_float((h * S + j) * D + e);
        p[j] = s / std::sqrt(static_cast<double>(D));
        m = std::max(m, p[j]);
      }
      for (int64_t j = 0; j <= last; ++j) l += p[j] = std::exp(p[j] - m);
      for (int64_t e = 0; e < D; ++e) {
        double o = 0;
        for (int64_t j = 0; j <= last; ++j) o += p[j] * V.get_float((h * S + j) * D + e);
        o /= l;
        double got = O.get_float((h * S + i) * D + e);
        err += (got - o) * (got - o);
        norm += o * o;
      }
    }
  }
  EXPECT_LT(std::sqrt(err / norm), 2e-3) << (causal ? "causal" : "full");
}

TEST(Examples, FlashAttention) {
  check_attention(false);
}
TEST(Examples, FlashAttentionCausal) {
  check_attention(true);
}

}  // namespace
}  // namespace tessel::examples

namespace tessel::examples {
namespace {

std::string text_file(const std::string& name) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/tile/" + name + ".tir");
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  // Drop the leading comment lines.
  while (text.rfind("//", 0) == 0) text = text.substr(text.find('\n') + 1);
  return text;
}

TEST(Examples, TextualCopiesMatchTheCppKernels) {
  EXPECT_EQ(text_file("gemm"), gemm(ScalarKind::f16, ScalarKind::f16, {32, 32, 16}).text());
  EXPECT_EQ(text_file("softmax"), softmax(ScalarKind::f16, 8, 32).text());
  EXPECT_EQ(text_file("rmsnorm"), rmsnorm(ScalarKind::f16, 4, 64).text());
}

}  // namespace
}  // namespace tessel::examples

#include "ir/canonicalize.h"

namespace tessel::examples {
namespace {

// Canonicalization never changes what a kernel computes: every bit of every output is the same.
TEST(Examples, CanonicalizePreservesResults) {
  Data d;
  const int64_t M = 21, N = 43, K = 40;
  HostTensor X = d.make(ScalarKind::f16, {M, N}), w = d.make(ScalarKind::f16, {N}),
             bvec = d.make(ScalarKind::f16, {N});
  HostTensor A = d.make(ScalarKind::f16, {M, K}), B = d.make(ScalarKind::f16, {N, K});
  struct Case {
    TileKernel kernel;
    std::vector<HostTensor*> inputs;
    std::vector<int64_t> out_shape;
    std::map<std::string, int64_t> sizes;
    bool with_eps;
  };
  std::vector<Case> cases = {
      {gemm(ScalarKind::f16, ScalarKind::f16, {16, 16, 16}),
       {&A, &B},
       {M, N},
       {{"M", M}, {"N", N}, {"K", K}},
       false},
      {softmax(ScalarKind::f16, 8, 16), {&X}, {M, N}, {{"M", M}, {"N", N}}, false},
      {layernorm(ScalarKind::f16, 4, 16), {&X, &w, &bvec}, {M, N}, {{"M", M}, {"N", N}}, true},
  };
  for (Case& c : cases) {
    auto canonical = ir::parse_module(c.kernel.text(), "copy");
    ir::canonicalize(*canonical);
    ir::verify(*canonical);
    EXPECT_LT(ir::print(*canonical).size(), c.kernel.text().size());  // it did something
    HostTensor before(ScalarKind::f16, c.out_shape), after(ScalarKind::f16, c.out_shape);
    for (HostTensor* out : {&before, &after}) {
      std::vector<interp::Argument> args(c.inputs.begin(), c.inputs.end());
      args.push_back(out);
      if (c.with_eps) args.push_back(1e-5);
      const ir::Operation& k = out == &before ? c.kernel.op() : *canonical->kernels[0];
      interp::interpret(k, args, {c.sizes, {}});
    }
    EXPECT_EQ(before.bytes(), after.bytes()) << c.kernel.op().signature().name;
  }
}

}  // namespace
}  // namespace tessel::examples
