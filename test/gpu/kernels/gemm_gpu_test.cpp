// The GEMMs tessel compiles for sm_90a (TMA + mbarrier ring + wgmma, examples/kernels/gemm*.tir),
// on the GPU: fresh random inputs for every case, the output poisoned with NaN before the launch,
// shapes that are not tile multiples in M, N and K, compared with a float64 host reference by
// ||C - ref|| / ||ref||. Large shapes check a sample of rows (every row of the first and last
// tiles and a stride through the rest) so the float64 reference stays quick.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "compile/compile.h"
#include "gpu/gpu_test.h"
#include "gpu/kernels/w4a16_problem.h"
#include "unit/codegen/pin_grid.h"
#include "interp/numerics.h"
#include "ir/parser.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/numerics.h"
#include "support/diagnostics.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

class GemmGpuTest : public testing::GpuTest {};

struct Shape {
  int64_t m, n, k;
};

// How a kernel stores its operands (row-major): A [M,K] or [K,M], B [N,K] or [K,N].
struct Majors {
  bool a_k_major = true, b_k_major = true;
};

// C = A B^T with A [M,K], B [N,K] row-major (or the layouts `majors` gives); returns the relative
// error over the checked rows. `batch` > 0: a batched kernel, every operand leading with that
// many problems (A [L,M,K], B [L,N,K], C [L,M,N]), each problem's rows checked.
double run_gemm(const std::string& kernel_name, runtime::HostFloat format, Shape s,
                const std::map<std::string, std::string>& attributes = {}, Majors majors = {},
                int launches = 1, int64_t batch = 0) {
  const int64_t problems = std::max<int64_t>(batch, 1);
  std::string text = examples::lowered_kernels().at(kernel_name);
  for (const auto& [from, to] : attributes) {  // every occurrence
    size_t at = text.find(from);
    if (at == std::string::npos) ADD_FAILURE() << "no '" << from << "' in " << kernel_name;
    for (; at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  auto module = ir::parse_module(text, kernel_name + ".tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  const uint64_t seed = runtime::fresh_seed();
  std::fprintf(stderr, "  %s %lldx%lldx%lld seed %llu\n", kernel_name.c_str(),
               static_cast<long long>(s.m), static_cast<long long>(s.n),
               static_cast<long long>(s.k), static_cast<unsigned long long>(seed));
  SCOPED_TRACE(kernel_name + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
               std::to_string(s.k) + " seed " + std::to_string(seed));
  auto a_bits = runtime::random_values(format, problems * s.m * s.k, seed);
  auto b_bits = runtime::random_values(format, problems * s.n * s.k, seed + 1);
  auto a = runtime::to_floats(format, a_bits), b = runtime::to_floats(format, b_bits);
  // At least 16 bytes each, so that K = 0 still has addresses to describe.
  auto upload = [](const std::vector<uint8_t>& bits) {
    runtime::DeviceBuffer buffer(std::max<size_t>(bits.size(), 16));
    if (!bits.empty()) buffer.upload(bits.data(), bits.size());
    return buffer;
  };
  runtime::DeviceBuffer da = upload(a_bits);
  runtime::DeviceBuffer db = upload(b_bits);
  runtime::DeviceBuffer dc(std::max<int64_t>(problems * s.m * s.n, 1) * 2);
  dc.fill_bytes(0xFF);  // NaN in f16 and bf16: an element the kernel misses fails the check
  ir::ScalarKind element =
      format == runtime::HostFloat::f16 ? ir::ScalarKind::f16 : ir::ScalarKind::bf16;
  std::vector<int64_t> a_shape =
      majors.a_k_major ? std::vector<int64_t>{s.m, s.k} : std::vector<int64_t>{s.k, s.m};
  std::vector<int64_t> b_shape =
      majors.b_k_major ? std::vector<int64_t>{s.n, s.k} : std::vector<int64_t>{s.k, s.n};
  std::vector<int64_t> c_shape = {s.m, s.n};
  if (batch > 0) {
    for (auto* shape : {&a_shape, &b_shape, &c_shape}) shape->insert(shape->begin(), batch);
  }
  // Several launches of one kernel object (each after poisoning C again): what one launch leaves
  // behind (split-k's arrival counters in its workspace) must not change the next one's result.
  for (int l = 0; l < launches; ++l) {
    dc.fill_bytes(0xFF);
    kernel.launch({TensorArg{da.ptr(), a_shape, element}, TensorArg{db.ptr(), b_shape, element},
                   TensorArg{dc.ptr(), c_shape, element}});
    runtime::context().synchronize();
  }
  auto c_bits = dc.to_host<uint8_t>();
  auto c = runtime::to_floats(format, c_bits);
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < s.m; ++r) {
    if (r < 128 || r >= s.m - 128 || r % 61 == 0) rows.push_back(r);
  }
  std::vector<float> got;
  std::vector<double> want;
  for (int64_t l = 0; l < problems; ++l) {
    const float* al = a.data() + l * s.m * s.k;
    const float* bl = b.data() + l * s.n * s.k;
    for (int64_t r : rows) {
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < s.k; ++k) {
          const double x = al[majors.a_k_major ? r * s.k + k : k * s.m + r];
          const double y = bl[majors.b_k_major ? j * s.k + k : k * s.n + j];
          sum += x * y;
        }
        want.push_back(sum);
        got.push_back(c[(l * s.m + r) * s.n + j]);
      }
    }
  }
  return runtime::relative_error(got, want);
}

const std::vector<Shape> kShapes = {{128, 256, 64},  {1, 1, 8},         {1000, 520, 264},
                                    {257, 129, 72},  {8191, 4097, 520}, {2048, 2048, 2048},
                                    {300, 600, 4104}};

TEST_F(GemmGpuTest, F16) {
  for (Shape s : kShapes) EXPECT_LT(run_gemm("gemm", runtime::HostFloat::f16, s), 2e-3);
}
TEST_F(GemmGpuTest, Bf16) {
  for (Shape s : kShapes) EXPECT_LT(run_gemm("gemm_bf16", runtime::HostFloat::bf16, s), 1e-2);
}
// The other operand layouts (examples/kernels/gemm_{nn,tn,tt}.tir): MN-major shared tiles filled
// by several 64x64 TMA boxes, read by wgmma with its transpose flags. Their facts ask for the
// stored rows' extents to be multiples of 8 (TMA's 16-byte strides).
TEST_F(GemmGpuTest, OperandLayouts) {
  const std::vector<Shape> shapes = {{128, 256, 64},  {8, 8, 8},         {1000, 520, 264},
                                     {264, 136, 72},  {8192, 4104, 520}, {2048, 2048, 2048},
                                     {304, 600, 4104}};
  for (Shape s : shapes) {
    EXPECT_LT(run_gemm("gemm_nn", runtime::HostFloat::f16, s, {}, {true, false}), 2e-3);
    EXPECT_LT(run_gemm("gemm_tn", runtime::HostFloat::f16, s, {}, {false, false}), 2e-3);
    EXPECT_LT(run_gemm("gemm_tt", runtime::HostFloat::f16, s, {}, {false, true}), 2e-3);
    // 2x1 clusters: each block multicasts 32 K rows of every 64-column atom of B's tile.
    EXPECT_LT(run_gemm("gemm_nn", runtime::HostFloat::f16, s,
                       {{"block_grid %tiles_m, %tiles_n :",
                         "block_grid %tiles_m, %tiles_n {cluster = [2,1]} :"}},
                       {true, false}),
              2e-3);
  }
}
// Few tokens with A stored [K,M] (examples/kernels/gemm_tn_swap.tir: Cᵀ = Bᵀ·A, the tokens as
// wgmma's N = 16, an MN-major B tile of 32-byte rows read through a 32-byte swizzle descriptor),
// split-k as the example pins it and unsplit; and 32 tokens (64-byte swizzle).
TEST_F(GemmGpuTest, SwappedFewTokensWithAStoredKByM) {
  const std::string split = "block_grid %tiles_n, %tiles_m {split_k = auto} :";
  const std::vector<Shape> shapes = {{16, 4096, 4096}, {8, 8, 8},        {24, 1000, 264},
                                     {40, 136, 72},    {1000, 520, 264}, {16, 600, 4104}};
  for (Shape s : shapes) {
    EXPECT_LT(run_gemm("gemm_tn_swap", runtime::HostFloat::f16, s, {}, {false, false}, 2), 2e-3);
    EXPECT_LT(run_gemm("gemm_tn_swap", runtime::HostFloat::f16, s,
                       {{split, "block_grid %tiles_n, %tiles_m :"}}, {false, false}),
              2e-3);
    EXPECT_LT(run_gemm("gemm_tn_swap", runtime::HostFloat::f16, s,
                       {{"value = 16}", "value = 32}"}, {",16]", ",32]"}, {"[16,", "[32,"}},
                       {false, false}),
              2e-3);
  }
}

// Split-K (src/transforms/schedule/split_k.h): the grid pinned `split_k = auto` (parts from the
// SM count: several at the few-tile, long-K shapes) and `split_k = 3` (parts with no K block at
// K = 8 and 72), each launched three times on one kernel object: the counters the last arrival
// leaves zero are reused by the next launch.
TEST_F(GemmGpuTest, SplitK) {
  const std::string grid = "block_grid %tiles_m, %tiles_n :";
  const std::vector<Shape> shapes = {{16, 4096, 4000}, {64, 520, 11008}, {257, 129, 72},
                                     {1, 1, 8},        {1000, 520, 264}, {300, 600, 4104}};
  for (const char* pin : {"auto", "3"}) {
    SCOPED_TRACE(pin);
    const std::string split =
        "block_grid %tiles_m, %tiles_n {split_k = " + std::string(pin) + "} :";
    for (Shape s : shapes) {
      EXPECT_LT(run_gemm("gemm", runtime::HostFloat::f16, s, {{grid, split}}, {}, 3), 2e-3);
      EXPECT_LT(run_gemm("gemm_nn", runtime::HostFloat::f16, {s.m, (s.n + 7) / 8 * 8, s.k},
                         {{grid, split}}, {true, false}, 3),
                2e-3);
    }
  }
  EXPECT_LT(run_gemm("gemm_bf16", runtime::HostFloat::bf16, {16, 4096, 4000},
                     {{grid, "block_grid %tiles_m, %tiles_n {split_k = auto} :"}}, {}, 3),
            1e-2);
}

// Tiles taken in turns by two consumer roles (alternate-tiles, src/transforms/async/
// alternate_tiles.h): the example over tiles of one consumer warpgroup, 64 x 256 (its output
// staged and stored by TMA, under the row-alignment branch unswitch-loops makes) and 128 x 128
// (stored from registers), pinned `alternate_tiles = true`; shapes with many tiles a block (both
// roles busy, the token handed on many times) and with one or two (role 1 idle), each launched
// three times on one kernel object (the token's barrier starts fresh every launch).
TEST_F(GemmGpuTest, TilesTakenInTurnsByTwoConsumers) {
  const std::string grid = "block_grid %tiles_m, %tiles_n :";
  const std::string pinned =
      "block_grid %tiles_m, %tiles_n {threads = 128, alternate_tiles = true} :";
  const std::map<std::string, std::string> tiles_64x256 = {
      {"%c128 = const {value = 128}", "%c128 = const {value = 64}"},
      {"[128,256]", "[64,256]"},
      {"[128,64]", "[64,64]"},
      {grid, pinned}};
  const std::map<std::string, std::string> tiles_128x128 = {
      {"%c256 = const {value = 256}", "%c256 = const {value = 128}"},
      {"[128,256]", "[128,128]"},
      {"[256,64]", "[128,64]"},
      {"[64,256]", "[64,128]"},
      {grid, pinned}};
  const std::vector<Shape> shapes = {{4000, 4100, 1000}, {8191, 4097, 520}, {1000, 520, 264},
                                     {257, 129, 72},     {128, 128, 64},    {1, 1, 8}};
  for (const auto* tiles : {&tiles_64x256, &tiles_128x128}) {
    SCOPED_TRACE(tiles == &tiles_64x256 ? "64x256" : "128x128");
    for (Shape s : shapes)
      EXPECT_LT(run_gemm("gemm", runtime::HostFloat::f16, s, *tiles, {}, 3), 2e-3);
  }
}

// Sizes are positive in tile IR (the interpreter's rule, which a launch shares): K = 0 is refused
// with a message, not run.
// Batched (examples/kernels/gemm_batched.tir): 3-D TMA boxes and stores per problem; ragged
// problems (partial tiles, N % 8 != 0 stored by hand), more units than SMs (a block's tiles
// cross problems), one problem, and many small ones.
TEST_F(GemmGpuTest, Batched) {
  const std::vector<std::pair<Shape, int64_t>> cases = {{{257, 129, 72}, 3},
                                                        {{1000, 520, 264}, 5},
                                                        {{128, 256, 64}, 1},
                                                        {{100, 40, 136}, 64},
                                                        {{1024, 1024, 1024}, 12}};
  for (const auto& [s, batch] : cases) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    EXPECT_LT(run_gemm("gemm_batched", runtime::HostFloat::f16, s, {}, {}, 2, batch), 2e-3);
  }
}

// FP8 (examples/kernels/gemm_e4m3.tir, and the same program in f8e5m2): C = scale_a scale_b
// (A B^T), bf16 out. Inputs uniform in [-2, 2) rounded to the FP8 format (the encodings uploaded
// as they are), C poisoned; every row of the first and last tiles and a stride through the rest
// against float64 over the decoded inputs.
double run_fp8_gemm(ir::ScalarKind element, Shape s, double scale_a, double scale_b) {
  std::string text = examples::lowered_kernels().at("gemm_e4m3");
  if (element == ir::ScalarKind::f8e5m2) {
    for (size_t at = text.find("f8e4m3"); at != std::string::npos; at = text.find("f8e4m3", at))
      text.replace(at, 6, "f8e5m2");
  }
  auto module = ir::parse_module(text, "gemm_e4m3.tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  const uint64_t seed = runtime::fresh_seed();
  SCOPED_TRACE(std::string(ir::to_string(element)) + " " + std::to_string(s.m) + "x" +
               std::to_string(s.n) + "x" + std::to_string(s.k) + " seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  interp::HostTensor a(element, {s.m, s.k}), b(element, {s.n, s.k});
  for (int64_t i = 0; i < a.size(); ++i) a.set_float(i, real(rng));
  for (int64_t i = 0; i < b.size(); ++i) b.set_float(i, real(rng));
  auto upload = [](const interp::HostTensor& t) {
    runtime::DeviceBuffer buffer(std::max<size_t>(t.bytes().size(), 16));
    buffer.upload(t.bytes().data(), t.bytes().size());
    return buffer;
  };
  runtime::DeviceBuffer da = upload(a), db = upload(b);
  runtime::DeviceBuffer dc(std::max<int64_t>(s.m * s.n, 1) * 2);
  dc.fill_bytes(0xFF);
  kernel.launch({TensorArg{da.ptr(), {s.m, s.k}, element}, TensorArg{db.ptr(), {s.n, s.k}, element},
                 TensorArg{dc.ptr(), {s.m, s.n}, ir::ScalarKind::bf16}, scale_a, scale_b});
  runtime::context().synchronize();
  auto c = runtime::to_floats(runtime::HostFloat::bf16, dc.to_host<uint8_t>());
  // The inputs decoded once (decoding an FP8 code per multiply made the 2048^3 check take minutes).
  std::vector<double> da_host(a.size()), db_host(b.size());
  for (int64_t i = 0; i < a.size(); ++i) da_host[i] = a.get_float(i);
  for (int64_t i = 0; i < b.size(); ++i) db_host[i] = b.get_float(i);
  std::vector<float> got;
  std::vector<double> want;
  for (int64_t r = 0; r < s.m; ++r) {
    if (!(r < 128 || r >= s.m - 128 || r % 61 == 0)) continue;
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < s.k; ++k) sum += da_host[r * s.k + k] * db_host[j * s.k + k];
      want.push_back(sum *
                     static_cast<float>(static_cast<float>(scale_a) * static_cast<float>(scale_b)));
      got.push_back(c[r * s.n + j]);
    }
  }
  return runtime::relative_error(got, want);
}

TEST_F(GemmGpuTest, Fp8) {
  const std::vector<Shape> shapes = {{128, 256, 128}, {257, 129, 80},     {1000, 520, 272},
                                     {1, 1, 16},      {2048, 2048, 2048}, {300, 600, 4112}};
  for (ir::ScalarKind element : {ir::ScalarKind::f8e4m3, ir::ScalarKind::f8e5m2}) {
    for (Shape s : shapes) EXPECT_LT(run_fp8_gemm(element, s, 0.5, 0.25), 6e-3);
  }
}

// W4A16 (examples/kernels/gemm_w4a16.tir): Q [N,K] uint4 packed two a byte, group scales
// S [K/G, N] f16, Y = X · ((Q - 8) · S)ᵀ; against float64 products of X and the dequantized
// weights (each rounded to f16 once, as the kernel packs them for wgmma) on sampled rows, the
// output poisoned. Shapes ragged in M and N (the tokens and weight rows of partial tiles), group
// sizes 64 and 128.
// `pins` (e.g. "split_k = 3" or "blocks_per_sm = 2") go on the example's block_grid; `resident`,
// when given, receives what the launch sized the persistent grid for (launch_sm_count).
double run_w4a16_gemm(int64_t m, int64_t n, int64_t k, int64_t group, const std::string& pins = "",
                      int64_t* resident = nullptr, bool zero_points = false) {
  std::string text = examples::lowered_kernels().at(zero_points ? "gemm_w4a16_zp" : "gemm_w4a16");
  if (!pins.empty()) text = testing::pin_block_grid(text, pins);
  auto module = ir::parse_module(text, "gemm_w4a16.tir");
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a());
  const uint64_t seed = runtime::fresh_seed();
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " g" +
               std::to_string(group) + " seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const testing::W4A16Problem p(m, n, k, group, rng, 0.005, 0.02, zero_points);
  runtime::DeviceBuffer dy(std::max<int64_t>(m * n, 1) * 2);
  dy.fill_bytes(0xFF);
  kernel.launch(p.args(p.dx, dy));
  runtime::context().synchronize();
  if (resident) *resident = kernel.launch_sm_count();
  auto y = runtime::to_floats(runtime::HostFloat::f16, dy.to_host<uint8_t>());
  const std::vector<double> xs = p.x_values();
  std::vector<float> got;
  std::vector<double> want;
  std::vector<std::pair<int64_t, int64_t>> where;  // (row, column) of each compared element
  for (int64_t r = 0; r < m; ++r) {
    if (!(r < 80 || r >= m - 80 || r % 61 == 0)) continue;
    const std::vector<double> row = p.reference_row(xs, r);
    want.insert(want.end(), row.begin(), row.end());
    got.insert(got.end(), y.begin() + r * n, y.begin() + (r + 1) * n);
    for (int64_t c = 0; c < n; ++c) where.emplace_back(r, c);
  }
  const double error = runtime::relative_error(got, want);
  if (error >= 3e-3) {
    // Where the wrong values are, to tell a race (a tile, a split-k part, a cache line) from a
    // numeric drift: the worst element and how many are off by more than 1% of the largest.
    double largest = 0, worst = 0;
    size_t worst_at = 0, off = 0;
    for (size_t i = 0; i < got.size(); ++i) largest = std::max(largest, std::abs(want[i]));
    for (size_t i = 0; i < got.size(); ++i) {
      const double d = std::abs(double(got[i]) - want[i]);
      if (d > worst) worst = d, worst_at = i;
      off += d > 0.01 * largest;
    }
    ADD_FAILURE() << "worst at row " << where[worst_at].first << ", column "
                  << where[worst_at].second << ": got " << got[worst_at] << ", want "
                  << want[worst_at] << "; " << off << " of " << got.size()
                  << " elements off by more than 1% of the largest (" << largest << ")";
  }
  return error;
}

TEST_F(GemmGpuTest, W4A16) {
  struct Case {
    int64_t m, n, k, group;
  };
  for (Case c : std::vector<Case>{{1, 200, 256, 128},
                                  {16, 4096, 1024, 64},
                                  {70, 328, 640, 64},
                                  {300, 1000, 1024, 128},
                                  {1, 8192, 4096, 128}}) {
    EXPECT_LT(run_w4a16_gemm(c.m, c.n, c.k, c.group), 3e-3);
  }
}

// Asymmetric quantization (gemm_w4a16_zp.tir): a zero point per group and weight row, read
// through the producer's ring beside the scales, on shapes ragged in M and N.
TEST_F(GemmGpuTest, W4A16ZeroPoints) {
  EXPECT_LT(run_w4a16_gemm(70, 328, 640, 64, "", nullptr, true), 3e-3);
  EXPECT_LT(run_w4a16_gemm(1, 8192, 4096, 128, "", nullptr, true), 3e-3);
  EXPECT_LT(run_w4a16_gemm(300, 1000, 1024, 128, "", nullptr, true), 3e-3);
}

// Two blocks per SM (blocks_per_sm = 2: launch bound and register pool for two 384-thread blocks
// of 51 KB shared memory each) with K split three ways: correct, and the persistent grid sized by
// the two blocks each SM holds (the occupancy API), not one per SM. Before lower-arefs' proxy
// fence (the threads' reads of a TMA-filled weight slot fenced before its release) this pair
// was wrong in most launches, each pin alone in a few per thousand; with it, 0 of 1204 launches
// of each pinned variant (bench/results/2026-11-28-w4a16-proxy-fence-h100.md).
TEST_F(GemmGpuTest, W4A16TwoBlocksPerSmWithSplitK) {
  for (int64_t m : {1, 70}) {
    int64_t resident = 0;
    EXPECT_LT(run_w4a16_gemm(m, 8192, 4096, 128, "split_k = 3, blocks_per_sm = 2", &resident),
              3e-3);
    EXPECT_EQ(resident, 2 * runtime::context().sm_count());
  }
}

// The two halves of the test above apart, at the shape that failed: K split three ways with one
// block per SM, and two blocks per SM without a split (the persistent grid sized for both).
TEST_F(GemmGpuTest, W4A16SplitKOneBlockPerSm) {
  EXPECT_LT(run_w4a16_gemm(70, 8192, 4096, 128, "split_k = 3"), 3e-3);
}

TEST_F(GemmGpuTest, W4A16TwoBlocksPerSmWithoutSplit) {
  int64_t resident = 0;
  EXPECT_LT(run_w4a16_gemm(300, 8192, 4096, 128, "blocks_per_sm = 2", &resident), 3e-3);
  EXPECT_EQ(resident, 2 * runtime::context().sm_count());
}

// The K loop split among roles of the block (split-roles): consumer warpgroups taking the K
// tiles in turns, their accumulators summed in shared memory, and producers issuing the loads in
// turns. W4A16 (128 x 64 tiles, 256-thread consumers) at one and 70 tokens, K = 4096 and a K of
// 41 blocks that neither two nor three roles divide; and the example GEMM on a 64 x 32 tile
// (split-roles refuses the 128 x 256 tile: its f32 partials do not fit beside the ring) on
// ragged shapes. (N stays small: the float64 references run on the host.)
TEST_F(GemmGpuTest, KLoopSplitAmongRoles) {
  for (const char* pins : {"consumer_split_k = 2, producer_split_k = 2", "consumer_split_k = 3"}) {
    SCOPED_TRACE(pins);
    for (int64_t m : {1, 70}) EXPECT_LT(run_w4a16_gemm(m, 640, 4096, 128, pins), 3e-3);
    EXPECT_LT(run_w4a16_gemm(70, 328, 2624, 64, pins), 3e-3);
  }
  // gemm.tir with 64 x 32 tiles.
  std::map<std::string, std::string> small = {
      {"%c128 = const {value = 128}", "%c128 = const {value = 64}"},
      {"%c256 = const {value = 256}", "%c256 = const {value = 32}"},
      {"register<f32>[128,256]", "register<f32>[64,32]"},
      {"iter(%c = %zero) : register<f32>[128,256]",
       "iter(%c = %zero) {stages = 8, mma_in_flight = 2} : register<f32>[64,32]"},
      {"shape = [128,64]} : global<f16>[128,64]", "shape = [64,64]} : global<f16>[64,64]"},
      {"%sA = copy %A_tile : shared<f16>[128,64]", "%sA = copy %A_tile : shared<f16>[64,64]"},
      {"shape = [256,64]} : global<f16>[256,64]", "shape = [32,64]} : global<f16>[32,64]"},
      {"%sB = copy %B_tile : shared<f16>[256,64]", "%sB = copy %B_tile : shared<f16>[32,64]"},
      {"%sBt = transpose %sB : shared<f16>[64,256]", "%sBt = transpose %sB : shared<f16>[64,32]"},
      {"%c_next = mma %sA, %sBt, %c : register<f32>[128,256]",
       "%c_next = mma %sA, %sBt, %c : register<f32>[64,32]"},
      {"shape = [128,256]} : global<f16>[128,256]", "shape = [64,32]} : global<f16>[64,32]"},
      {"%out = cast %acc : register<f16>[128,256]", "%out = cast %acc : register<f16>[64,32]"}};
  for (const char* pins :
       {"", "{consumer_split_k = 2} ", "{consumer_split_k = 2, producer_split_k = 2} "}) {
    SCOPED_TRACE(pins);
    auto attributes = small;
    attributes["block_grid %tiles_m, %tiles_n :"] =
        std::string("block_grid %tiles_m, %tiles_n ") + pins + ":";
    for (Shape s : {Shape{64, 1024, 4096}, Shape{70, 200, 1000}, Shape{1, 40, 8}})
      EXPECT_LT(run_gemm("gemm", runtime::HostFloat::f16, s, attributes), 2e-3);
  }
}

TEST_F(GemmGpuTest, EmptyKIsAUserError) {
  try {
    run_gemm("gemm", runtime::HostFloat::f16, {100, 200, 0});
    ADD_FAILURE() << "K = 0 launched";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("size K = 0 must be positive"), std::string::npos)
        << e.what();
  }
}

// The pipeline's two knobs, pinned: one stage (load, wait, compute), and every stage count with
// no wgmma group left in flight.
TEST_F(GemmGpuTest, PinnedStagesAndGroupsInFlight) {
  const std::string loop = "iter(%c = %zero)";
  for (const char* attrs : {"{stages = 1, mma_in_flight = 0}", "{stages = 2, mma_in_flight = 0}",
                            "{stages = 3, mma_in_flight = 2}", "{stages = 2, mma_in_flight = 1}"}) {
    SCOPED_TRACE(attrs);
    EXPECT_LT(
        run_gemm("gemm", runtime::HostFloat::f16, {1000, 520, 1032}, {{loop, loop + " " + attrs}}),
        2e-3);
  }
}

// The non-specialized path (block_grid pinned `warp_specialize = false`: lower-mainloops' ring,
// one thread loading stages - mma_in_flight iterations ahead) at every shape above, and at each
// ring depth and number of groups in flight on a shape whose 17 k-tiles wrap every ring
// (1000x520x1032: partial tiles in M, N and K).
TEST_F(GemmGpuTest, NonSpecialized) {
  const std::string grid = "block_grid %tiles_m, %tiles_n :";
  const std::string plain = "block_grid %tiles_m, %tiles_n {warp_specialize = false} :";
  for (Shape s : kShapes)
    EXPECT_LT(run_gemm("gemm", runtime::HostFloat::f16, s, {{grid, plain}}), 2e-3);
  const std::string loop = "iter(%c = %zero)";
  for (const char* attrs : {"{stages = 1, mma_in_flight = 0}", "{stages = 2, mma_in_flight = 1}",
                            "{stages = 3, mma_in_flight = 2}", "{stages = 4, mma_in_flight = 0}"}) {
    SCOPED_TRACE(attrs);
    EXPECT_LT(run_gemm("gemm", runtime::HostFloat::f16, {1000, 520, 1032},
                       {{grid, plain}, {loop, loop + " " + attrs}}),
              2e-3);
  }
}

}  // namespace
}  // namespace tessel
