// The JIT runtime on a real GPU: compile, load, launch (with clusters and large shared memory),
// buffers, TMA descriptor encoding, timing.
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "gpu/gpu_test.h"
#include "runtime/buffer.h"
#include "runtime/numerics.h"
#include "runtime/timing.h"
#include "runtime/tma.h"
#include "support/diagnostics.h"

namespace tessel::runtime {
namespace {

using tessel::testing::compile_and_load;
using RuntimeGpu = tessel::testing::GpuTest;

const char* kKernels = R"(
extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
// Each block writes its rank in the cluster and the cluster's size, read from the special registers.
extern "C" __global__ void cluster_ranks(unsigned* out) {
  unsigned rank, size;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  if (threadIdx.x == 0) out[blockIdx.x] = rank * 1000 + size;
}
// Reverses n floats through dynamic shared memory (n may exceed 48 KiB worth).
extern "C" __global__ void reverse_through_shared(float* data, int n) {
  extern __shared__ float staging[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) staging[i] = data[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) data[i] = staging[n - 1 - i];
}
)";

// The timing tests' kernel: axpy over buffers of `elements` floats, launched over `count` of them
// (at most `elements`) by over(count), as the timing functions take a launch.
struct AxpyLaunches {
  explicit AxpyLaunches(int elements) : x(elements * 4), y(elements * 4) {
    x.fill_bytes(0);
    y.fill_bytes(0);
    x_ptr = x.ptr();
    y_ptr = y.ptr();
  }
  std::function<void(CUstream)> over(int count) {
    return [this, count](CUstream s) {
      int elements = count;
      void* args[] = {&y_ptr, &x_ptr, &a, &elements};
      LaunchConfig config;
      config.grid = {static_cast<unsigned>((count + 255) / 256)};
      config.block = {256};
      config.stream = s;
      axpy.launch(config, args);
    };
  }
  Module module = compile_and_load(kKernels);
  Function axpy = module.function("axpy");
  DeviceBuffer x, y;
  CUdeviceptr x_ptr = 0, y_ptr = 0;
  float a = 2;
};

TEST_F(RuntimeGpu, CompileLaunchAndCheckAgainstHost) {
  Module module = compile_and_load(kKernels);
  Function axpy = module.function("axpy");
  const int n = 1000003;  // not a multiple of the block
  std::uint64_t seed = fresh_seed();
  auto x = to_floats(HostFloat::f32, random_values(HostFloat::f32, n, seed));
  auto y = to_floats(HostFloat::f32, random_values(HostFloat::f32, n, seed + 1));
  DeviceBuffer x_device = DeviceBuffer::from_host(x), y_device = DeviceBuffer::from_host(y);
  CUdeviceptr x_ptr = x_device.ptr(), y_ptr = y_device.ptr();
  float a = 1.5f;
  int count = n;
  void* args[] = {&y_ptr, &x_ptr, &a, &count};
  LaunchConfig config;
  config.grid = {(n + 255) / 256};
  config.block = {256};
  axpy.launch(config, args);
  context().synchronize();
  auto result = y_device.to_host<float>();
  std::vector<float> expected(n);
  // NVRTC contracts a*x+y into one fused multiply-add, so the host reference does too.
  for (int i = 0; i < n; ++i) expected[i] = std::fma(a, x[i], y[i]);
  EXPECT_EQ(relative_error(std::span<const float>(result), std::span<const float>(expected)), 0.0)
      << "seed " << seed;
}

TEST_F(RuntimeGpu, ClusterLaunchGivesEachBlockItsRank) {
  Module module = compile_and_load(kKernels);
  Function kernel = module.function("cluster_ranks");
  const unsigned blocks = 16, cluster = 4;
  DeviceBuffer out(blocks * sizeof(unsigned));
  out.fill_bytes(0xff);
  CUdeviceptr ptr = out.ptr();
  void* args[] = {&ptr};
  LaunchConfig config;
  config.grid = {blocks};
  config.block = {32};
  config.cluster = {cluster};
  kernel.launch(config, args);
  context().synchronize();
  auto ranks = out.to_host<unsigned>();
  for (unsigned block = 0; block < blocks; ++block) {
    EXPECT_EQ(ranks[block], (block % cluster) * 1000 + cluster) << "block " << block;
  }
  config.grid = {blocks + 1};
  try {
    kernel.launch(config, args);
    FAIL() << "a grid that is not a multiple of the cluster must be rejected";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("is not a multiple of the cluster"), std::string::npos);
  }
}

TEST_F(RuntimeGpu, LargeDynamicSharedMemory) {
  Module module = compile_and_load(kKernels);
  Function kernel = module.function("reverse_through_shared");
  const int n = 50000;  // 200 KB of floats, far above the 48 KiB default
  auto data = to_floats(HostFloat::f32, random_values(HostFloat::f32, n, fresh_seed()));
  DeviceBuffer device = DeviceBuffer::from_host(data);
  CUdeviceptr ptr = device.ptr();
  int count = n;
  void* args[] = {&ptr, &count};
  LaunchConfig config;
  config.grid = {1};
  config.block = {512};
  config.dynamic_shared_bytes = n * sizeof(float);
  kernel.launch(config, args);
  context().synchronize();
  auto result = device.to_host<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(result[i], data[n - 1 - i]) << i;
  config.dynamic_shared_bytes = 300 * 1024;
  EXPECT_THROW(kernel.launch(config, args), UserError);
}

TEST_F(RuntimeGpu, UnknownKernelNameIsUserError) {
  Module module = compile_and_load(kKernels);
  try {
    module.function("no_such_kernel");
    FAIL();
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("no kernel named 'no_such_kernel'"),
              std::string::npos);
  }
}

TEST_F(RuntimeGpu, TmaDescriptorEncodes) {
  DeviceBuffer matrix(1000 * 520 * 2);
  TmaSpec spec;
  spec.element = TmaElement::f16;
  spec.address = matrix.ptr();
  spec.shape = {520, 1000};
  spec.strides_bytes = {520 * 2};
  spec.box = {64, 128};
  spec.swizzle = TmaSwizzle::b128;
  CUtensorMap map = make_tma_descriptor(spec);
  std::vector<unsigned char> bytes(sizeof(map));
  std::memcpy(bytes.data(), &map, sizeof(map));
  EXPECT_NE(std::count(bytes.begin(), bytes.end(), 0), static_cast<long>(bytes.size()));
  spec.box = {64, 512};
  EXPECT_THROW(make_tma_descriptor(spec), UserError);
}

TEST_F(RuntimeGpu, TimingReportsMedianOfPositiveSamples) {
  const int n = 1 << 24;
  AxpyLaunches axpy(n);
  Stream stream;
  TimingResult timing = time_launches(axpy.over(n), 3, 20, stream.handle());
  ASSERT_EQ(timing.samples_ms.size(), 20u);
  EXPECT_GT(timing.median_ms, 0);
  EXPECT_LE(timing.min_ms, timing.median_ms);
  EXPECT_LE(timing.median_ms, timing.max_ms);
  // 3 × 64 MiB moved; even at 4 TB/s that is above 0.04 ms, and far below 100 ms.
  EXPECT_GT(timing.median_ms, 0.04);
  EXPECT_LT(timing.median_ms, 100);
}

}  // namespace
}  // namespace tessel::runtime

namespace tessel::runtime {
namespace {

// Two kernels of known relative cost timed side by side: axpy over n and over 4n elements. The
// interleaved timings must keep the samples apart (one list per kernel) and see the 4x work.
TEST_F(RuntimeGpu, InterleavedTimingSeparatesTheTwoKernels) {
  const int n = 1 << 22;
  AxpyLaunches axpy(4 * n);
  Stream stream;
  auto [small, large] = time_interleaved(axpy.over(n), axpy.over(4 * n), 3, 20, stream.handle());
  ASSERT_EQ(small.samples_ms.size(), 20u);
  ASSERT_EQ(large.samples_ms.size(), 20u);
  double ratio = large.median_ms / small.median_ms;
  EXPECT_GT(ratio, 2.5) << small.median_ms << " vs " << large.median_ms;
  EXPECT_LT(ratio, 6.0) << small.median_ms << " vs " << large.median_ms;
}

// time_all_interleaved rotates the order each round; each sample must still land with its own
// kernel: the same axpy over all, a quarter and all of the elements, the quarter clearly faster.
TEST_F(RuntimeGpu, InterleavedTimingKeepsEachKernelsSamples) {
  const int n = 1 << 24;
  AxpyLaunches axpy(n);
  Stream stream;
  std::vector<TimingResult> timings =
      time_all_interleaved({axpy.over(n), axpy.over(n / 4), axpy.over(n)}, 2, 15, stream.handle());
  ASSERT_EQ(timings.size(), 3u);
  for (const TimingResult& t : timings) ASSERT_EQ(t.samples_ms.size(), 15u);
  EXPECT_LT(timings[1].median_ms * 2, timings[0].median_ms);
  EXPECT_LT(timings[1].median_ms * 2, timings[2].median_ms);
}

}  // namespace
}  // namespace tessel::runtime
