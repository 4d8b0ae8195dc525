// Launches that overlap the launch before them (overlap-launches: launch_dependents first,
// grid_wait before each thread's first access that may depend on the earlier launch, L2
// prefetches of ready tensors before it; the runtime launches such kernels with programmatic
// stream serialization). Each test chains launches back to back on one stream, every launch
// reading what the one before it wrote, with no synchronization between them: a launch that
// read before the earlier one finished would see the poison (NaN) or the previous round's values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "compile/compile.h"
#include "gpu/gpu_test.h"
#include "interp/numerics.h"
#include "ir/parser.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/numerics.h"
#include "support/diagnostics.h"
#include "tessel/example_kernels.h"
#include "gpu/kernels/w4a16_problem.h"

namespace tessel {
namespace {

class OverlapGpuTest : public testing::GpuTest {};

// Y[b] = X[blocks - 1 - b] + W[b] by blocks of 1024: block b of a launch reads what the last
// blocks of the launch before it write (the last to finish), so an early read would find them
// unwritten. W is ready: no launch writes it.
constexpr const char* kReversedAdd = R"(
kernel @reversed_add[N](%X: global<f32>[N], %W: global<f32>[N], %Y: global<f32>[N]) facts(N % 1024 == 0) ready(%W) {
  %N = size {name = N} : index
  %c1024 = const {value = 1024} : index
  %c1 = const {value = 1} : index
  %blocks = div %N, %c1024 : index
  %b = block_grid %blocks {threads = 256} : index
  %last = sub %blocks, %c1 : index
  %r = sub %last, %b : index
  %x_tile = tile %X, %r {shape = [1024]} : global<f32>[1024]
  %w_tile = tile %W, %b {shape = [1024]} : global<f32>[1024]
  %x = copy %x_tile : register<f32>[1024]
  %w = copy %w_tile : register<f32>[1024]
  %y = add %x, %w : register<f32>[1024]
  %y_tile = tile %Y, %b {shape = [1024]} : global<f32>[1024]
  copy %y, %y_tile
}
)";

CUstream make_stream() {
  CUstream stream = nullptr;
  runtime::check(runtime::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                 "cuStreamCreate");
  return stream;
}

TEST_F(OverlapGpuTest, ChainedRowLaunchesSeeEachOthersWrites) {
  auto module = ir::parse_module(kReversedAdd, "reversed_add.tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  ASSERT_TRUE(kernel.emitted().overlaps_launches) << kernel.lowered_ir();
  const int64_t n = int64_t{1} << 24, blocks = n / 1024;
  const uint64_t seed = runtime::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(-1000, 1000);
  // Integers: every sum is exact in f32, so the chain's result is known exactly.
  std::vector<float> x(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  for (float& v : x) v = static_cast<float>(small(rng));
  for (float& v : w) v = static_cast<float>(small(rng) % 8);
  for (bool own_stream : {true, false}) {
    SCOPED_TRACE(own_stream ? "a stream of its own" : "the null stream");
    CUstream stream = own_stream ? make_stream() : nullptr;
    runtime::DeviceBuffer a(static_cast<size_t>(n) * 4), b(static_cast<size_t>(n) * 4),
        dw(static_cast<size_t>(n) * 4);
    a.upload(x.data(), x.size() * 4);
    dw.upload(w.data(), w.size() * 4);
    b.fill_bytes(0xFF);
    const int launches = 20;
    for (int i = 0; i < launches; ++i) {
      runtime::DeviceBuffer& from = i % 2 == 0 ? a : b;
      runtime::DeviceBuffer& to = i % 2 == 0 ? b : a;
      kernel.launch({TensorArg{from.ptr(), {n}, ir::ScalarKind::f32},
                     TensorArg{dw.ptr(), {n}, ir::ScalarKind::f32},
                     TensorArg{to.ptr(), {n}, ir::ScalarKind::f32}},
                    stream);
    }
    if (stream) {
      runtime::check(runtime::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
      runtime::check(runtime::driver().cuStreamDestroy(stream), "cuStreamDestroy");
    }
    runtime::context().synchronize();
    std::vector<double> want(x.begin(), x.end()), next(want.size());
    for (int i = 0; i < launches; ++i) {
      for (int64_t blk = 0; blk < blocks; ++blk) {
        for (int64_t e = 0; e < 1024; ++e) {
          next[blk * 1024 + e] = want[(blocks - 1 - blk) * 1024 + e] + w[blk * 1024 + e];
        }
      }
      want.swap(next);
    }
    const std::vector<float> got = a.to_host<float>();  // an even count of launches ends in a
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += static_cast<double>(got[i]) != want[i];
    EXPECT_EQ(wrong, 0);
  }
}

// W4A16 (examples/kernels/gemm_w4a16.tir: persistent, Q and S ready) chained:
// Y1 = X W^T, then Y2 = Y1 W^T back to back (N = K), both outputs poisoned first. Y2 is checked
// against the float64 product of the Y1 the GPU wrote.
TEST_F(OverlapGpuTest, ChainedW4A16LaunchesReadTheOutputBeforeThem) {
  auto module = ir::parse_module(examples::lowered_kernels().at("gemm_w4a16"), "gemm_w4a16.tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  ASSERT_TRUE(kernel.emitted().overlaps_launches);
  const int64_t m = 16, n = 4096, k = 4096;
  const uint64_t seed = runtime::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Small scales keep Y1 (the second launch's X) in the range of X.
  const testing::W4A16Problem p(m, n, k, 128, rng, 0.0005, 0.002);
  runtime::DeviceBuffer y1(static_cast<size_t>(m * n) * 2), y2(static_cast<size_t>(m * n) * 2);
  auto product = [&](const std::vector<double>& in) {
    std::vector<double> out;
    for (int64_t r = 0; r < m; ++r) {
      const std::vector<double> row = p.reference_row(in, r);
      out.insert(out.end(), row.begin(), row.end());
    }
    return out;
  };
  CUstream stream = make_stream();
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    y1.fill_bytes(0xFF);
    y2.fill_bytes(0xFF);
    runtime::context().synchronize();
    kernel.launch(p.args(p.dx, y1), stream);
    kernel.launch(p.args(y1, y2), stream);
    runtime::check(runtime::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
    const auto got1 = runtime::to_floats(runtime::HostFloat::f16, y1.to_host<uint8_t>());
    const auto got2 = runtime::to_floats(runtime::HostFloat::f16, y2.to_host<uint8_t>());
    EXPECT_LT(runtime::relative_error(got1, product(p.x_values())), 3e-3);
    EXPECT_LT(runtime::relative_error(got2, product(std::vector<double>(got1.begin(), got1.end()))),
              3e-3);
  }
  runtime::check(runtime::driver().cuStreamDestroy(stream), "cuStreamDestroy");
}

}  // namespace
}  // namespace tessel
