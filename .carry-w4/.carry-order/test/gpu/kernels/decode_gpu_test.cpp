// Flash-decoding on the GPU (examples/kernels/flash_decode.tir, the split-KV kernel, then
// flash_decode_combine.tir): one query row per head against a KV cache of ragged length (1000,
// 4097, 131072), grouped-query (H = 32 query heads over HK = 8 KV heads) and multi-head (H = HK).
// Fresh random inputs for every case; the partial outputs, the LSEs and O poisoned with NaN
// before the launches; O compared with a float64 reference of softmax(q Kᵀ / sqrt(D)) V on
// sampled heads (the first, the last and a stride through the rest), and O checked finite
// everywhere. The split count is the launcher's (decode_splits below, as bench/python/decode.py
// chooses it); the kernels use at most that many. Both kernels are compiled for sm_90a by a test
// that needs no GPU; the launches skip without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "compile/compile.h"
#include "gpu/gpu_test.h"
#include "ir/parser.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/numerics.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

constexpr int64_t kD = 128;

CompiledKernel compile_example(const std::string& name) {
  auto module = ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
  return compile(*module->kernels.front(), target::cuda::Target::sm90a());
}

// The split count a launcher asks for: per SM, ceil(units / SMs) units of (tiles per split + 1)
// tiles' time (the 1: a unit's fixed cost, its Q load and its partial's store), minimized over
// the counts that leave no split empty (the kernel would use fewer otherwise).
int64_t decode_splits(int64_t kv_heads, int64_t length, int64_t sms) {
  const int64_t tiles = (length + 127) / 128;
  int64_t best = 1, best_cost = std::numeric_limits<int64_t>::max();
  for (int64_t ns = 1; ns <= tiles; ++ns) {
    const int64_t per = (tiles + ns - 1) / ns;
    if ((tiles + per - 1) / per != ns) continue;
    const int64_t waves = (kv_heads * ns + sms - 1) / sms, cost = waves * (per + 1);
    if (cost < best_cost) best = ns, best_cost = cost;
  }
  return best;
}

TEST(FlashDecodeCompile, BothKernelsCompileForSm90a) {
  for (const char* name : {"flash_decode", "flash_decode_combine"}) {
    CompiledKernel k = compile_example(name);
    EXPECT_GT(k.cubin().size(), 1000u) << name;
  }
}

TEST(FlashDecodeCompile, SplitChoice) {
  EXPECT_EQ(decode_splits(8, 4096, 132), 16);  // 128 units of 2 tiles
  // 1024 tiles per KV head: 1 split is 256 units in 2 waves (2 x 1025), 18 splits of 57 tiles
  // 4608 units in 35 waves (35 x 58 = 2030, the waves 99.7% full).
  EXPECT_EQ(decode_splits(256, 131072, 132), 18);
  EXPECT_EQ(decode_splits(1, 100, 132), 1);
}

class DecodeGpuTest : public testing::GpuTest {};

// Decode for batch b, h query heads over hk KV heads, KV length l; returns ||O - ref|| / ||ref||
// over the sampled heads (infinity if O is not finite everywhere).
double run_decode(int64_t batch, int64_t heads, int64_t kv_heads, int64_t length) {
  static CompiledKernel split = compile_example("flash_decode");
  static CompiledKernel combine = compile_example("flash_decode_combine");
  const int64_t group = heads / kv_heads, bhk = batch * kv_heads, bh = batch * heads;
  const int64_t ns = decode_splits(bhk, length, 132);
  const uint64_t seed = runtime::fresh_seed();
  std::fprintf(stderr, "  decode B=%lld H=%lld HK=%lld L=%lld NS=%lld seed %llu\n",
               static_cast<long long>(batch), static_cast<long long>(heads),
               static_cast<long long>(kv_heads), static_cast<long long>(length),
               static_cast<long long>(ns), static_cast<unsigned long long>(seed));
  SCOPED_TRACE("B=" + std::to_string(batch) + " H=" + std::to_string(heads) +
               " HK=" + std::to_string(kv_heads) + " L=" + std::to_string(length) +
               " seed " + std::to_string(seed));
  const auto f16 = runtime::HostFloat::f16;
  const std::vector<uint8_t> q_bits = runtime::random_values(f16, bh * kD, seed, -3.0f, 3.0f);
  const std::vector<uint8_t> k_bits = runtime::random_values(f16, bhk * length * kD, seed + 1);
  const std::vector<uint8_t> v_bits = runtime::random_values(f16, bhk * length * kD, seed + 2);
  runtime::DeviceBuffer q(q_bits.size()), k(k_bits.size()), v(v_bits.size());
  q.upload(q_bits.data(), q_bits.size());
  k.upload(k_bits.data(), k_bits.size());
  v.upload(v_bits.data(), v_bits.size());
  runtime::DeviceBuffer op(bh * ns * kD * 4), lse(bh * ns * 4), o(bh * kD * 2);
  op.fill_bytes(0xFF);  // NaN in f32 and f16: what a kernel misses fails the check
  lse.fill_bytes(0xFF);
  o.fill_bytes(0xFF);
  using ir::ScalarKind;
  split.launch({TensorArg{q.ptr(), {bhk, group, kD}, ScalarKind::f16},
                TensorArg{k.ptr(), {bhk, length, kD}, ScalarKind::f16},
                TensorArg{v.ptr(), {bhk, length, kD}, ScalarKind::f16},
                TensorArg{op.ptr(), {bhk, group, ns, kD}, ScalarKind::f32},
                TensorArg{lse.ptr(), {bhk, group, ns}, ScalarKind::f32}});
  combine.launch({TensorArg{op.ptr(), {bh, ns, kD}, ScalarKind::f32},
                  TensorArg{lse.ptr(), {bh, ns}, ScalarKind::f32},
                  TensorArg{o.ptr(), {bh, kD}, ScalarKind::f16}, length});
  runtime::context().synchronize();
  const std::vector<float> out = runtime::to_floats(f16, o.to_host<uint8_t>());
  if (!std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); })) {
    ADD_FAILURE() << "a non-finite output: some element was not written";
    return INFINITY;
  }
  const std::vector<float> qf = runtime::to_floats(f16, q_bits), kf = runtime::to_floats(f16, k_bits),
                           vf = runtime::to_floats(f16, v_bits);
  std::vector<float> got;
  std::vector<double> want, s(length), acc(kD);
  for (int64_t head = 0; head < bh; ++head) {
    if (!(head < 2 || head == bh - 1 || head % 7 == 3)) continue;
    const int64_t kv = head / group;  // flattened: (b H + hq) / G = b HK + hq / G
    const float* qr = &qf[head * kD];
    double m = -INFINITY;
    for (int64_t j = 0; j < length; ++j) {
      const float* kr = &kf[(kv * length + j) * kD];
      double dot = 0;
      for (int64_t d = 0; d < kD; ++d) dot += double(qr[d]) * kr[d];
      s[j] = dot / std::sqrt(double(kD));
      m = std::max(m, s[j]);
    }
    double l = 0;
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t j = 0; j < length; ++j) {
      const double p = std::exp(s[j] - m);
      l += p;
      const float* vr = &vf[(kv * length + j) * kD];
      for (int64_t d = 0; d < kD; ++d) acc[d] += p * vr[d];
    }
    for (int64_t d = 0; d < kD; ++d) {
      want.push_back(acc[d] / l);
      got.push_back(out[head * kD + d]);
    }
  }
  return runtime::relative_error(got, want);
}

// f16 inputs, P rounded to f16 for P V, O rounded to f16.
constexpr double kTolerance = 2e-3;

TEST_F(DecodeGpuTest, GroupedQueryRaggedLengths) {
  EXPECT_LT(run_decode(2, 32, 8, 1000), kTolerance);
  EXPECT_LT(run_decode(1, 32, 8, 4097), kTolerance);
  EXPECT_LT(run_decode(3, 32, 8, 1), kTolerance);
}

TEST_F(DecodeGpuTest, MultiHeadRaggedLengths) {
  EXPECT_LT(run_decode(2, 32, 32, 1000), kTolerance);
  EXPECT_LT(run_decode(1, 32, 32, 4097), kTolerance);
}

// KV length 128K: up to 1024 tiles per KV head in a few splits (and many per split).
TEST_F(DecodeGpuTest, LongCache128K) {
  EXPECT_LT(run_decode(1, 32, 8, 131072), kTolerance);
  EXPECT_LT(run_decode(1, 8, 8, 131072), kTolerance);
  EXPECT_LT(run_decode(2, 32, 8, 131071), kTolerance);
}

}  // namespace
}  // namespace tessel
