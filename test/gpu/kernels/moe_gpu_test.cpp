// The mixed-type MoE expert GEMMs on the GPU (examples/kernels/moe_w4a16.tir, and moe_w8a16.tir
// with fp8 e4m3 weights): tokens sorted by expert times each expert's int4 weights (packed nibble
// order) or fp8 weights (permuted 64-column blocks), with group scales, fresh random
// inputs, Y poisoned with NaN, experts that receive no token, one token, and counts across the
// 64-token tiles, N and the expert count not multiples of the tiles (13 experts: find_group's
// batches of eight ends and its remainder), against a float64 host product of the dequantized
// weights (each rounded to f16, as the kernel feeds them to wgmma) by relative error.
// moe_w4a16_combine.tir also scales each row by a routing weight and stores it at row dest[r]
// (a random permutation): the reference applies both. moe_w4a16_gather.tir reads row r of X from
// token token[r] of the layer's tokens (a random map; TMA one row a box).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "gpu/gpu_test.h"
#include "interp/numerics.h"
#include "ir/parser.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/numerics.h"
#include "tessel/example_kernels.h"
#include "unit/codegen/w4a16_reference.h"

namespace tessel {
namespace {

class MoeGpuTest : public testing::GpuTest {};

// Runs the kernel with `counts[e]` rows for expert e; returns ||Y - ref|| / ||ref|| over all rows
// (a row the kernel left unwritten is NaN and fails the comparison). `fp8`: moe_w8a16.
// `combine`: moe_w4a16_combine (weights in 0.5..1, dest a random permutation of the rows).
double run_moe(const std::vector<int64_t>& counts, int64_t n, int64_t k, int64_t group,
               bool fp8 = false, bool combine = false, bool gather = false) {
  const int64_t experts = static_cast<int64_t>(counts.size());
  std::vector<int64_t> ends;
  int64_t m = 0;
  for (int64_t c : counts) ends.push_back(m += c);
  const std::string name = fp8       ? "moe_w8a16"
                           : combine ? "moe_w4a16_combine"
                           : gather  ? "moe_w4a16_gather"
                                     : "moe_w4a16";
  auto module = ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  const uint64_t seed = runtime::fresh_seed();
  SCOPED_TRACE("E=" + std::to_string(experts) + " M=" + std::to_string(m) + " N=" +
               std::to_string(n) + " K=" + std::to_string(k) + " seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0), scale(0.005, 0.02);
  std::uniform_int_distribution<int> nibble(0, 15);
  const ir::ScalarKind weight = fp8 ? ir::ScalarKind::f8e4m3 : ir::ScalarKind::u4;
  const int64_t tokens = gather ? m / 2 + 1 : m;  // X's rows: the tokens, or the routed rows
  interp::HostTensor x(ir::ScalarKind::f16, {tokens, k}), q(weight, {experts, n, k}),
      s(ir::ScalarKind::f16, {experts, k / group, n}), row_ends(ir::ScalarKind::i32, {experts});
  for (int64_t i = 0; i < x.size(); ++i) x.set_float(i, real(rng));
  for (int64_t i = 0; i < q.size(); ++i) {  // storage order
    if (fp8)
      q.set_float(i, 8.0 * real(rng));  // rounded to e4m3
    else
      q.set_int(i, nibble(rng));
  }
  for (int64_t i = 0; i < s.size(); ++i) s.set_float(i, scale(rng));
  for (int64_t e = 0; e < experts; ++e) row_ends.set_int(e, ends[e]);
  interp::HostTensor routing(ir::ScalarKind::f32, {m}), dest(ir::ScalarKind::i32, {m});
  std::vector<int64_t> slot_of(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) slot_of[static_cast<size_t>(r)] = r;
  if (combine) std::shuffle(slot_of.begin(), slot_of.end(), rng);
  for (int64_t r = 0; r < m; ++r) {
    routing.set_float(r, combine ? 0.75 + 0.25 * real(rng) : 1.0);
    dest.set_int(r, slot_of[static_cast<size_t>(r)]);
  }
  interp::HostTensor token(ir::ScalarKind::i32, {m});
  std::uniform_int_distribution<int64_t> any_token(0, tokens - 1);
  for (int64_t r = 0; r < m; ++r) token.set_int(r, gather ? any_token(rng) : r);
  auto upload = [](const interp::HostTensor& t) {
    runtime::DeviceBuffer buffer(std::max<size_t>(t.bytes().size(), 16));
    buffer.upload(t.bytes().data(), t.bytes().size());
    return buffer;
  };
  runtime::DeviceBuffer dx = upload(x), dq = upload(q), ds = upload(s), dends = upload(row_ends);
  runtime::DeviceBuffer drouting = upload(routing), ddest = upload(dest), dtoken = upload(token);
  runtime::DeviceBuffer dy(std::max<int64_t>(m * n, 1) * 2);
  dy.fill_bytes(0xFF);
  std::vector<KernelArg> args{TensorArg{dx.ptr(), {tokens, k}, ir::ScalarKind::f16},
                              TensorArg{dq.ptr(), {experts, n, k}, weight},
                              TensorArg{ds.ptr(), {experts, k / group, n}, ir::ScalarKind::f16},
                              TensorArg{dy.ptr(), {m, n}, ir::ScalarKind::f16},
                              TensorArg{dends.ptr(), {experts}, ir::ScalarKind::i32}};
  if (combine) {
    args.push_back(TensorArg{drouting.ptr(), {m}, ir::ScalarKind::f32});
    args.push_back(TensorArg{ddest.ptr(), {m}, ir::ScalarKind::i32});
  }
  if (gather) args.push_back(TensorArg{dtoken.ptr(), {m}, ir::ScalarKind::i32});
  kernel.launch(args);
  runtime::context().synchronize();
  auto y = runtime::to_floats(runtime::HostFloat::f16, dy.to_host<uint8_t>());
  std::vector<float> got;
  std::vector<double> want;
  for (int64_t e = 0, r = 0; e < experts; ++e) {
    std::vector<double> w(static_cast<size_t>(n * k));
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t at =
            (e * n + j) * k + kk - kk % 64 +
            (fp8 ? testing::fp8_position(kk % 64) : testing::packed_position(kk % 64));
        const double v = (fp8 ? q.get_float(at) : static_cast<double>(q.get_int(at)) - 8.0) *
                         s.get_float((e * (k / group) + kk / group) * n + j);
        w[j * k + kk] = interp::round_to(ir::ScalarKind::f16, v);
      }
    }
    for (; r < ends[e]; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        const int64_t row = token.get_int(r);
        for (int64_t kk = 0; kk < k; ++kk) sum += x.get_float(row * k + kk) * w[j * k + kk];
        want.push_back(sum * routing.get_float(r));
        got.push_back(y[slot_of[static_cast<size_t>(r)] * n + j]);
      }
    }
  }
  return runtime::relative_error(got, want);
}

TEST_F(MoeGpuTest, RaggedExperts) {
  // 13 experts: empty ones first, between and last; one token; counts across 64-token tiles.
  EXPECT_LT(run_moe({0, 70, 1, 0, 5, 64, 0, 130, 2, 0, 0, 63, 0}, 264, 640, 128), 3e-3);
  // Every expert empty but one, past the first batch of eight ends.
  EXPECT_LT(run_moe({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}, 136, 256, 64), 3e-3);
  // Many experts with a token each (the decode shape: the list far shorter than the grid).
  std::vector<int64_t> one_each(40, 0);
  for (int64_t e = 0; e < 40; e += 5) one_each[e] = 1;
  EXPECT_LT(run_moe(one_each, 512, 1024, 128), 3e-3);
}

TEST_F(MoeGpuTest, CombineScattersScaledRows) {
  EXPECT_LT(run_moe({0, 70, 1, 0, 5, 64, 0, 130, 2, 0, 0, 63, 0}, 264, 640, 128, false, true),
            3e-3);
  std::vector<int64_t> one_each(40, 0);
  for (int64_t e = 0; e < 40; e += 5) one_each[e] = 1;
  EXPECT_LT(run_moe(one_each, 512, 1024, 128, false, true), 3e-3);
}

TEST_F(MoeGpuTest, GatherReadsRowsFromTheirTokens) {
  EXPECT_LT(
      run_moe({0, 70, 1, 0, 5, 64, 0, 130, 2, 0, 0, 63, 0}, 264, 640, 128, false, false, true),
      3e-3);
  std::vector<int64_t> one_each(40, 0);
  for (int64_t e = 0; e < 40; e += 5) one_each[e] = 1;
  EXPECT_LT(run_moe(one_each, 512, 1024, 128, false, false, true), 3e-3);
}

TEST_F(MoeGpuTest, Fp8ExpertsRagged) {
  EXPECT_LT(run_moe({0, 70, 1, 0, 5, 64, 0, 130, 2, 0, 0, 63, 0}, 264, 640, 128, true), 3e-3);
  std::vector<int64_t> one_each(40, 0);
  for (int64_t e = 0; e < 40; e += 5) one_each[e] = 1;
  EXPECT_LT(run_moe(one_each, 512, 1024, 128, true), 3e-3);
}

}  // namespace
}  // namespace tessel
