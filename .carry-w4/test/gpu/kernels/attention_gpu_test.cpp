// The FlashAttention forward kernels tessel compiles for sm_90a from tile programs
// (examples/kernels/flash_attention*.tir: a TMA producer, a consumer with the online softmax, the
// second GEMM in wgmma's RS form), on the GPU: fresh random inputs for every case, the output
// poisoned with NaN before the launch, sequence lengths that are not multiples of the 128-row
// tiles, compared with a float64 host reference of softmax(Q Kᵀ / sqrt(D)) V on sampled query
// rows (the first and last 64 and a stride through the rest) of every head.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "gpu/gpu_test.h"
#include "ir/parser.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/numerics.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

class AttentionGpuTest : public testing::GpuTest {};

struct Options {
  bool causal = false;
  int64_t kv_heads = 0;  // > 0: grouped-query attention, K and V of that many heads
  bool bf16 = false;     // the kernel's f16 tensors as bf16
  bool lse = false;      // the kernel also writes LSE [heads, length] (f32), checked too
};

// Runs `kernel_name` on [heads, length, d] inputs; returns ||O - ref|| / ||ref|| over the
// checked rows, and fails the test on a non-finite output anywhere.
double run_attention(const std::string& kernel_name, int64_t heads, int64_t length, int64_t d,
                     Options opt = {}) {
  const bool causal = opt.causal;
  const int64_t kv_heads = opt.kv_heads > 0 ? opt.kv_heads : heads;
  std::string text = examples::lowered_kernels().at(kernel_name);
  if (opt.bf16) {
    for (size_t at = text.find("<f16>"); at != std::string::npos; at = text.find("<f16>", at))
      text.replace(at, 5, "<bf16>");
    for (size_t at = text.find("<f16,"); at != std::string::npos; at = text.find("<f16,", at))
      text.replace(at, 5, "<bf16,");
  }
  auto module = ir::parse_module(text, kernel_name + ".tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  const uint64_t seed = runtime::fresh_seed();
  std::fprintf(stderr, "  %s BH=%lld S=%lld seed %llu\n", kernel_name.c_str(),
               static_cast<long long>(heads), static_cast<long long>(length),
               static_cast<unsigned long long>(seed));
  SCOPED_TRACE(kernel_name + " BH=" + std::to_string(heads) + " S=" + std::to_string(length) +
               " seed " + std::to_string(seed));
  const auto format = opt.bf16 ? runtime::HostFloat::bf16 : runtime::HostFloat::f16;
  const auto element = opt.bf16 ? ir::ScalarKind::bf16 : ir::ScalarKind::f16;
  const int64_t n = heads * length * d, n_kv = kv_heads * length * d;
  std::vector<std::vector<uint8_t>> bits;
  std::vector<std::vector<float>> values;
  std::vector<runtime::DeviceBuffer> buffers;
  for (int i = 0; i < 3; ++i) {
    bits.push_back(runtime::random_values(format, i == 0 ? n : n_kv, seed + i));
    values.push_back(runtime::to_floats(format, bits.back()));
    buffers.emplace_back(bits.back().size());
    buffers.back().upload(bits.back().data(), bits.back().size());
  }
  runtime::DeviceBuffer out(n * 2);
  out.fill_bytes(0xFF);  // NaN in f16: a row the kernel misses fails the check
  const std::vector<int64_t> shape = {heads, length, d}, kv_shape = {kv_heads, length, d};
  std::vector<KernelArg> args;
  for (size_t i = 0; i < buffers.size(); ++i)
    args.push_back(TensorArg{buffers[i].ptr(), i == 0 ? shape : kv_shape, element});
  args.push_back(TensorArg{out.ptr(), shape, element});
  runtime::DeviceBuffer lse_out(std::max<int64_t>(heads * length, 1) * 4);
  lse_out.fill_bytes(0xFF);  // NaN in f32
  if (opt.lse) args.push_back(TensorArg{lse_out.ptr(), {heads, length}, ir::ScalarKind::f32});
  kernel.launch(args);
  runtime::context().synchronize();
  auto o = runtime::to_floats(format, out.to_host<uint8_t>());
  const bool finite = std::all_of(o.begin(), o.end(), [](float x) { return std::isfinite(x); });
  EXPECT_TRUE(finite) << "a non-finite output: some element was not written";
  const auto& q = values[0];
  const auto& k = values[1];
  const auto& v = values[2];
  std::vector<float> got, lse_got;
  std::vector<double> want, lse_want;
  const std::vector<float> lse = opt.lse ? lse_out.to_host<float>() : std::vector<float>{};
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> s(length), acc(d);
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t base = h * length * d;
    const int64_t kv_base = h / (heads / kv_heads) * length * d;  // the head's K and V
    for (int64_t r = 0; r < length; ++r) {
      if (!(r < 64 || r >= length - 64 || r % 37 == 0)) continue;
      const int64_t keys = causal ? r + 1 : length;
      double m = -INFINITY;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += double(q[base + r * d + c]) * k[kv_base + j * d + c];
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      double l = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < keys; ++j) {
        const double p = std::exp(s[j] - m);
        l += p;
        for (int64_t c = 0; c < d; ++c) acc[c] += p * v[kv_base + j * d + c];
      }
      for (int64_t c = 0; c < d; ++c) {
        want.push_back(acc[c] / l);
        got.push_back(o[base + r * d + c]);
      }
      if (opt.lse) {
        lse_want.push_back(m + std::log(l));
        lse_got.push_back(lse[h * length + r]);
      }
    }
  }
  if (opt.lse) {
    const double lse_err = runtime::relative_error(lse_got, lse_want);
    EXPECT_LT(lse_err, 1e-5) << "the log-sum-exp output";
  }
  return runtime::relative_error(got, want);
}

// f16 inputs and P rounded to f16 before the second GEMM: errors near 3e-4 (measured).
constexpr double kTolerance = 2e-3;

// The variable-length kernels (flash_attention_varlen{,_causal}.tir): sequences of `lengths`
// packed [T, H, 128], the cumulative lengths (int32, cu_seqlens without its leading 0) on the
// device; every sequence's sampled rows (the first and last 64 and a stride) of every head against
// float64, O poisoned. Returns ||O - ref|| / ||ref||.
double run_varlen(const std::string& kernel_name, const std::vector<int64_t>& lengths,
                  int64_t heads, bool causal) {
  constexpr int64_t d = 128;
  int64_t total = 0;
  for (int64_t l : lengths) total += l;
  auto module = ir::parse_module(examples::lowered_kernels().at(kernel_name), kernel_name + ".tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  const uint64_t seed = runtime::fresh_seed();
  std::string what = kernel_name + " H=" + std::to_string(heads) + " lengths";
  for (int64_t l : lengths) what += " " + std::to_string(l);
  what += " seed " + std::to_string(seed);
  std::fprintf(stderr, "  %s\n", what.c_str());
  SCOPED_TRACE(what);
  const auto format = runtime::HostFloat::f16;
  const int64_t n = total * heads * d;
  std::vector<std::vector<float>> values;
  std::vector<runtime::DeviceBuffer> buffers;
  for (int i = 0; i < 3; ++i) {
    const auto bits = runtime::random_values(format, n, seed + i);
    values.push_back(runtime::to_floats(format, bits));
    buffers.emplace_back(bits.size());
    buffers.back().upload(bits.data(), bits.size());
  }
  std::vector<int32_t> ends;
  for (int64_t l : lengths)
    ends.push_back(static_cast<int32_t>((ends.empty() ? 0 : ends.back()) + l));
  runtime::DeviceBuffer ends_buffer(ends.size() * 4);
  ends_buffer.upload(ends.data(), ends.size() * 4);
  runtime::DeviceBuffer out(n * 2);
  out.fill_bytes(0xFF);  // NaN in f16: a row the kernel misses fails the check
  const std::vector<int64_t> shape = {total, heads, d};
  std::vector<KernelArg> args;
  for (auto& b : buffers) args.push_back(TensorArg{b.ptr(), shape, ir::ScalarKind::f16});
  args.push_back(TensorArg{out.ptr(), shape, ir::ScalarKind::f16});
  args.push_back(
      TensorArg{ends_buffer.ptr(), {static_cast<int64_t>(ends.size())}, ir::ScalarKind::i32});
  kernel.launch(args);
  runtime::context().synchronize();
  const auto o = runtime::to_floats(format, out.to_host<uint8_t>());
  const bool finite = std::all_of(o.begin(), o.end(), [](float x) { return std::isfinite(x); });
  EXPECT_TRUE(finite) << "a non-finite output: some element was not written";
  const auto& q = values[0];
  const auto& k = values[1];
  const auto& v = values[2];
  auto at = [&](int64_t token, int64_t h) { return (token * heads + h) * d; };
  std::vector<float> got;
  std::vector<double> want;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  int64_t first = 0;
  for (int64_t len : lengths) {
    std::vector<double> s(len), acc(d);
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t r = 0; r < len; ++r) {
        if (!(r < 64 || r >= len - 64 || r % 37 == 0)) continue;
        const int64_t keys = causal ? r + 1 : len;
        double m = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += double(q[at(first + r, h) + c]) * k[at(first + j, h) + c];
          s[j] = dot * scale;
          m = std::max(m, s[j]);
        }
        double l = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < keys; ++j) {
          const double p = std::exp(s[j] - m);
          l += p;
          for (int64_t c = 0; c < d; ++c) acc[c] += p * v[at(first + j, h) + c];
        }
        for (int64_t c = 0; c < d; ++c) {
          want.push_back(acc[c] / l);
          got.push_back(o[at(first + r, h) + c]);
        }
      }
    }
    first += len;
  }
  return runtime::relative_error(got, want);
}

TEST_F(AttentionGpuTest, HeadDim128RaggedLengths) {
  for (auto [heads, length] :
       {std::pair<int64_t, int64_t>{2, 200}, {3, 1000}, {1, 4097}, {5, 128}, {1, 1}})
    EXPECT_LT(run_attention("flash_attention", heads, length, 128), kTolerance);
}

TEST_F(AttentionGpuTest, HeadDim64RaggedLengths) {
  for (auto [heads, length] : {std::pair<int64_t, int64_t>{2, 200}, {3, 1000}, {1, 4097}})
    EXPECT_LT(run_attention("flash_attention_d64", heads, length, 64), kTolerance);
}

// Head dim 256: 64-key tiles (Q plus two K/V stages fit shared memory), the 128 x 256 output
// accumulator over two consumer warpgroups; lengths that are no multiple of 64 or 128, and more
// (head, query tile) pairs than SMs (the persistent tile loop).
TEST_F(AttentionGpuTest, HeadDim256RaggedLengths) {
  for (auto [heads, length] :
       {std::pair<int64_t, int64_t>{2, 200}, {3, 1000}, {1, 4097}, {1, 1}, {48, 1100}})
    EXPECT_LT(run_attention("flash_attention_d256", heads, length, 256), kTolerance);
}

TEST_F(AttentionGpuTest, HeadDim256Causal) {
  for (auto [heads, length] : {std::pair<int64_t, int64_t>{2, 200}, {3, 1000}, {1, 4097}})
    EXPECT_LT(run_attention("flash_attention_causal_d256", heads, length, 256, {.causal = true}),
              kTolerance);
}

TEST_F(AttentionGpuTest, HeadDim256Bf16) {
  EXPECT_LT(run_attention("flash_attention_d256", 2, 1000, 256, {.bf16 = true}), 1e-2);
  EXPECT_LT(
      run_attention("flash_attention_causal_d256", 2, 1000, 256, {.causal = true, .bf16 = true}),
      1e-2);
}

// Causal: key tiles past the query tile's last row skipped, the diagonal tile masked.
TEST_F(AttentionGpuTest, CausalRaggedLengths) {
  for (auto [heads, length] :
       {std::pair<int64_t, int64_t>{2, 200}, {3, 1000}, {1, 4097}, {40, 300}})
    EXPECT_LT(run_attention("flash_attention_causal", heads, length, 128, {.causal = true}),
              kTolerance);
}

// Grouped-query attention: 8 query heads over 2 key/value heads (and 6 over 6, 3 over 1).
TEST_F(AttentionGpuTest, GroupedQueryHeads) {
  EXPECT_LT(run_attention("flash_attention_gqa", 8, 1000, 128, {.kv_heads = 2}), kTolerance);
  EXPECT_LT(run_attention("flash_attention_gqa", 6, 300, 128, {.kv_heads = 6}), kTolerance);
  EXPECT_LT(run_attention("flash_attention_gqa", 3, 4097, 128, {.kv_heads = 1}), kTolerance);
}

// The log-sum-exp of each row's scaled scores, written beside O (flash_attention_lse.tir).
TEST_F(AttentionGpuTest, LogSumExp) {
  for (auto [heads, length] : {std::pair<int64_t, int64_t>{2, 200}, {3, 1000}})
    EXPECT_LT(run_attention("flash_attention_lse", heads, length, 128, {.lse = true}), kTolerance);
}

// Variable lengths in one batch: one token, a sequence ending inside its first key tile (its
// last tile reads the next sequence's keys: the finite over-read), a long ragged one, and the
// last ending inside a tile at the tensor's end (TMA's zero fill); an empty sequence; more
// (head, query tile) pairs than SMs with 16 heads.
TEST_F(AttentionGpuTest, VariableLengths) {
  EXPECT_LT(run_varlen("flash_attention_varlen", {1, 17, 1000, 4097}, 4, false), kTolerance);
  EXPECT_LT(run_varlen("flash_attention_varlen", {300, 0, 129, 5}, 16, false), kTolerance);
}

TEST_F(AttentionGpuTest, VariableLengthsCausal) {
  EXPECT_LT(run_varlen("flash_attention_varlen_causal", {1, 17, 1000, 4097}, 4, true), kTolerance);
  EXPECT_LT(run_varlen("flash_attention_varlen_causal", {300, 0, 129, 5}, 16, true), kTolerance);
}

// bf16 inputs and output (P rounded to bf16 for the second GEMM: a looser bound).
TEST_F(AttentionGpuTest, Bf16) {
  EXPECT_LT(run_attention("flash_attention", 2, 1000, 128, {.bf16 = true}), 1e-2);
  EXPECT_LT(run_attention("flash_attention_causal", 2, 1000, 128, {.causal = true, .bf16 = true}),
            1e-2);
}

// More (head, query tile) pairs than SMs: the persistent tile loop runs several tiles per block,
// and Q's once-per-tile aref cycles through its slots.
TEST_F(AttentionGpuTest, ManyTilesPerBlock) {
  EXPECT_LT(run_attention("flash_attention", 48, 1100, 128), kTolerance);
}

}  // namespace
}  // namespace tessel
