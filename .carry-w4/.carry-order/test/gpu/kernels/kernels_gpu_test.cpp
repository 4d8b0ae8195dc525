// The memory-bound kernels compiled by tessel, on the GPU: fresh random inputs for every case,
// poisoned outputs, ragged shapes (rows not a multiple of the 8-row tile, columns not a multiple of
// the 512-column tile), compared with a float64 host reference by ||out - ref|| / ||ref||.
#include <gtest/gtest.h>

#include <random>

#include "bench/harness/memory_kernels.h"
#include "cross_warp_tir.h"
#include "gpu/gpu_test.h"
#include "support/diagnostics.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

class KernelsGpuTest : public testing::GpuTest {};

// (rows, cols): tiny, ragged in both dimensions, one partial column tile, many column tiles.
const std::vector<std::pair<int64_t, int64_t>> kShapes = {{1, 8},      {7, 1000}, {33, 520},
                                                          {130, 4104}, {9, 8192}, {1024, 2048}};

// Kernels specialized for rows of 8192: ragged row counts only.
const std::vector<std::pair<int64_t, int64_t>> kShapesN8192 = {{1, 8192}, {3, 8192}, {129, 8192}};

void check_kernel(const std::string& name, const std::string& source = "", double tolerance = 3e-3,
                  const std::vector<std::pair<int64_t, int64_t>>& shapes = kShapes) {
  std::random_device device;
  for (auto [rows, cols] : shapes) {
    uint64_t seed = (static_cast<uint64_t>(device()) << 32) | device();
    bench::MemoryCase c(name, rows, cols, seed, source);
    c.run();
    double err = c.relative_error();
    EXPECT_LT(err, tolerance) << name << " " << rows << "x" << cols << " seed " << seed;
  }
}

TEST_F(KernelsGpuTest, BiasGelu) {
  check_kernel("bias_gelu");
}
TEST_F(KernelsGpuTest, Softmax) {
  check_kernel("softmax");
}
TEST_F(KernelsGpuTest, RmsNorm) {
  check_kernel("rmsnorm");
}
TEST_F(KernelsGpuTest, LayerNorm) {
  check_kernel("layernorm");
}
TEST_F(KernelsGpuTest, SoftmaxN8192) {
  check_kernel("softmax_n8192", "", 3e-3, kShapesN8192);
}
TEST_F(KernelsGpuTest, RmsNormN8192) {
  check_kernel("rmsnorm_n8192", "", 3e-3, kShapesN8192);
}
TEST_F(KernelsGpuTest, LayerNormN8192) {
  check_kernel("layernorm_n8192", "", 3e-3, kShapesN8192);
}
TEST_F(KernelsGpuTest, Gemv) {
  check_kernel("gemv");
}
// A variant named <base>_<anything> is checked against its base's reference (the bench's kernel
// variants); the bench's sampled check (every n-th row) agrees with the full one.
TEST_F(KernelsGpuTest, VariantsUseTheirBaseReferenceAndRowSamplesCheck) {
  std::string text = examples::lowered_kernels().at("gemv");
  text.replace(text.find("@gemv["), 6, "@gemv_copy[");
  check_kernel("gemv_copy", text);
  bench::MemoryCase c("rmsnorm", 130, 4104, 11);
  c.run();
  double full = c.relative_error();
  c.check_every_nth_row(32);
  double sampled = c.relative_error();
  EXPECT_LT(full, 3e-3);
  EXPECT_LT(sampled, 3e-3);
  EXPECT_NE(full, sampled);  // a different set of rows
}
// Needs no GPU: the file is read before anything touches the device.
TEST(MemoryCaseErrors, UnreadableKernelFileIsNamed) {
  try {
    bench::MemoryCase c("no/such/variant.tir", 8, 8, 1);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("cannot read kernel file 'no/such/variant.tir'"), std::string::npos)
        << e.message();
  }
}
// f32, no divisibility facts (scalar, predicated accesses), reduction and broadcast through
// shared memory across warps.
TEST_F(KernelsGpuTest, CrossWarpRowScale) {
  check_kernel("row_scale", kCrossWarpTir, 1e-5);
}

// The kernel object checks launch arguments before touching the GPU.
TEST_F(KernelsGpuTest, RunTwiceGivesTheSameResult) {
  bench::MemoryCase c("rmsnorm", 17, 1032, 5);
  c.run();
  double first = c.relative_error();
  c.run();
  EXPECT_EQ(first, c.relative_error());
}

}  // namespace
}  // namespace tessel
