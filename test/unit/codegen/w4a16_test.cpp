// The W4A16 GEMMs (examples/kernels/gemm_w4a16.tir, natural weight order,
// gemm_w4a16_packed.tir, the weights stored in permuted column blocks, and
// bench/kernel-variants/gemm_w4a16_tiled.tir, those blocks stored tile by tile, and its
// gemm_w4a16_tiled_groups.tir, two scale groups per K tile, and gemm_w4a16_zp.tir, a zero point
// per group and row instead of 8): in the interpreter as
// written and lowered by the default pipeline (roles interleaved, few SMs), against plain loops
// bit for bit, on shapes ragged in M and N; the packed one's CUDA for sm_90a: 8-byte fragment
// reads, the lop3 unpack with the zero point folded, no spills, no serialized wgmma.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "tessel/example_kernels.h"
#include "sm90a_compile.h"
#include "pin_grid.h"
#include "w4a16_reference.h"

namespace tessel {
namespace {

using interp::HostTensor;

using testing::packed_position;
using testing::round_f16;

// `parts` > 1 pins the grid `split_k = parts` (split-k shifts the scale group's K too): the
// reference then sums each part's K blocks from +0 and the parts' sums in part order. `roles`
// > 1 pins `consumer_split_k = roles` (and `producers` > 1 `producer_split_k`): consumer role w
// sums the K blocks w, w + roles, ... from +0, and the first adds the others' sums in role order.
void check(const std::string& name, bool lowered, int64_t M, int64_t N, int64_t K, int64_t G,
           const char* schedule, int64_t parts = 1, int64_t roles = 1, int64_t producers = 1) {
  SCOPED_TRACE(name + (lowered ? " lowered " : " as written ") + std::to_string(M) + "x" +
               std::to_string(N) + "x" + std::to_string(K) + " g" + std::to_string(G) + " " +
               schedule + " parts " + std::to_string(parts) + " roles " + std::to_string(roles) +
               " producers " + std::to_string(producers));
  // The tiled variant lives with the bench's kernel variants: Q holds one 64-column K tile per row,
  // the 128-row tile (bn, k) at rows (bn * K / 64 + k) * 128 ... (gemm_w4a16_tiled.tir).
  // gemm_w4a16_tiled_groups.tir: 64-row tiles of K 128, two scale groups of 64 per tile (G = 64
  // only), each part of the tile its own wgmma: the same sums, k ascending.
  const bool groups = name == "gemm_w4a16_tiled_groups";
  const bool tiled = name == "gemm_w4a16_tiled" || groups;
  const int64_t tile_rows = groups ? 64 : 128, tile_k = groups ? 128 : 64;
  std::string text;
  if (tiled) {
    std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/bench/kernel-variants/" + name + ".tir");
    ASSERT_TRUE(in.good()) << name;
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  } else {
    text = examples::lowered_kernels().at(name);
  }
  std::string pins;
  if (parts > 1) pins = "split_k = " + std::to_string(parts);
  if (roles > 1) pins += (pins.empty() ? "" : ", ") + ("consumer_split_k = " + std::to_string(roles));
  if (producers > 1)
    pins += (pins.empty() ? "" : ", ") + ("producer_split_k = " + std::to_string(producers));
  if (!pins.empty()) text = testing::pin_block_grid(text, pins);
  auto module = ir::parse_module(text, name + ".tir");
  ir::verify(*module);
  if (lowered) pipeline::lower(*module);
  const bool packed = name == "gemm_w4a16_packed" || tiled;
  const bool zero_points = name == "gemm_w4a16_zp";
  std::mt19937_64 rng(20261126 + M * 31 + N);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), scale(0.005, 0.02);
  std::uniform_int_distribution<int> nibble(0, 15);
  HostTensor x(ir::ScalarKind::f16, {M, K}),
      q(ir::ScalarKind::u4,
        tiled ? std::vector<int64_t>{N * K / tile_k, tile_k} : std::vector<int64_t>{N, K}),
      s(ir::ScalarKind::f16, {K / G, N}), z(ir::ScalarKind::f16, {K / G, N}),
      y(ir::ScalarKind::f16, {M, N});
  for (int64_t i = 0; i < x.size(); ++i) x.set_float(i, unit(rng));
  for (int64_t i = 0; i < q.size(); ++i) q.set_int(i, nibble(rng));  // storage order
  for (int64_t i = 0; i < s.size(); ++i) s.set_float(i, scale(rng));
  for (int64_t i = 0; i < y.size(); ++i) y.set_float(i, unit(rng));  // poisoned
  // Zero points as AWQ stores them (whole numbers 0..15) and, every third one, with a fraction
  // (q - z then rounds to f16, as the tile program's subtraction does).
  for (int64_t i = 0; i < z.size(); ++i) z.set_float(i, nibble(rng) + (i % 3 == 0 ? 0.3 : 0.0));
  std::vector<interp::Argument> args{&x, &q, &s, &y};
  if (zero_points) args = {&x, &q, &s, &z, &y};
  interp::RunOptions options;
  options.sizes = {{"M", M}, {"N", N}, {"K", K}, {"KG", K / G}};
  if (tiled) options.sizes["NQ"] = N * K / tile_k;
  options.sm_count = 3;
  options.schedule = interp::Schedule::parse(schedule);
  interp::interpret(*module->kernels.front(), args, options);
  // The weights as the tile program computes them: (q - 8) * s or (q - z) * s, each op rounded
  // to f16.
  std::vector<float> w(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      const int64_t row =
          tiled ? ((n / tile_rows) * (K / tile_k) + k / tile_k) * tile_rows + n % tile_rows : n;
      const int64_t at = tiled    ? row * tile_k + k % tile_k - k % 64 + packed_position(k % 64)
                         : packed ? n * K + k - k % 64 + packed_position(k % 64)
                                  : n * K + k;
      const float qc =
          zero_points ? round_f16(static_cast<float>(q.get_int(at)) -
                                  static_cast<float>(z.get_float((k / G) * N + n)))
                      : static_cast<float>(q.get_int(at)) - 8.0f;
      w[n * K + k] = round_f16(qc * static_cast<float>(s.get_float((k / G) * N + n)));
    }
  }
  int64_t bad = 0;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;  // the mma's order: k ascending, from +0, in each part and role
      const int64_t blocks = K / tile_k;  // roles and parts take whole K tiles
      for (int64_t part = 0; part < parts; ++part) {
        const int64_t first = part * blocks / parts, end = (part + 1) * blocks / parts;
        float partial = 0.0f;
        for (int64_t role = 0; role < roles; ++role) {
          float turns = 0.0f;
          for (int64_t b = first + role; b < end; b += roles) {
            for (int64_t k = b * tile_k; k < (b + 1) * tile_k; ++k)
              turns = turns + static_cast<float>(x.get_float(m * K + k)) * w[n * K + k];
          }
          partial = role == 0 ? turns : partial + turns;
        }
        acc = acc + partial;
      }
      const float want = round_f16(acc), got = static_cast<float>(y.get_float(m * N + n));
      if (got != want && bad++ < 5)
        ADD_FAILURE() << "Y[" << m << "," << n << "] = " << got << ", reference " << want;
    }
  }
  EXPECT_EQ(bad, 0);
}

// One kernel's cases as written and lowered, under three schedules and split-k (one test per
// kernel, so that CTest spreads them over the cores: together they took 23 s).
void check_plain_loops(const char* name) {
  for (bool lowered : {false, true}) check(name, lowered, 70, 200, 256, 128, "round-robin");
  check(name, true, 1, 136, 192, 64, "producer-first");
  check(name, true, 130, 72, 128, 64, "random:5");
  // Split-K: 3 parts of 1, 1 and 2 K blocks, the scale groups (G = 64: one per block) shifted
  // with them; more SMs than tiles so parts of one tile interleave.
  check(name, true, 70, 200, 256, 64, "random:7", 3);
}

TEST(W4A16, MatchesPlainLoopsBitForBit) { check_plain_loops("gemm_w4a16"); }
TEST(W4A16, PackedMatchesPlainLoopsBitForBit) { check_plain_loops("gemm_w4a16_packed"); }
TEST(W4A16, ZeroPointsMatchPlainLoopsBitForBit) { check_plain_loops("gemm_w4a16_zp"); }

TEST(W4A16, TiledWeightsMatchPlainLoopsBitForBit) {
  // The weights stored tile by tile: the tile coordinate bn * K + k keeps the whole K under
  // split-k while the loop counts the part's blocks.
  check("gemm_w4a16_tiled", false, 70, 256, 256, 64, "round-robin");
  check("gemm_w4a16_tiled", true, 70, 256, 256, 64, "random:3");
  check("gemm_w4a16_tiled", true, 70, 256, 256, 64, "random:7", 3);
  // Two scale groups of 64 per K tile of 128, each part of the dequantized tile its own wgmma.
  check("gemm_w4a16_tiled_groups", false, 70, 192, 384, 64, "round-robin");
  check("gemm_w4a16_tiled_groups", true, 70, 192, 384, 64, "random:3");
}

// The K loop split among roles of the block (split-roles): two or three consumer warpgroups
// taking the K blocks in turns (5 blocks: 3 + 2, and 2 + 2 + 1), one or two producers, summed
// in role order through shared memory, also inside the parts of a split-k — bit for bit.
TEST(W4A16, RolesTakingTurnsMatchPlainLoopsBitForBit) {
  check("gemm_w4a16", true, 70, 200, 320, 64, "round-robin", 1, 2);
  check("gemm_w4a16", true, 70, 200, 320, 64, "producer-first", 1, 2, 2);
  check("gemm_w4a16_packed", true, 5, 136, 320, 64, "random:3", 1, 3);
  check("gemm_w4a16_tiled", true, 70, 256, 320, 64, "random:7", 1, 2, 2);
  // With split-k too: two parts of 2 and 3 blocks, each split between two consumer roles.
  check("gemm_w4a16_tiled", true, 70, 256, 320, 64, "random:9", 2, 2);
  // The groups variant with three consumer and two producer roles (5 K tiles of 128: 2 + 2 + 1).
  check("gemm_w4a16_tiled_groups", true, 5, 128, 640, 64, "random:5", 1, 3, 2);
}

TEST(W4A16, PackedOrderReadsWordsAndUnpacksWithLop3) {
  auto module = ir::parse_module(examples::lowered_kernels().at("gemm_w4a16_packed"),
                                 "gemm_w4a16_packed.tir");
  const std::string cuda =
      testing::compile_sm90a_source(*module->kernels.front()).cuda_source();
  EXPECT_NE(cuda.find("(ld.shared.b64, 1 address class(es))"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("qc[2] = tessel::device::u4_pair_to_f16x2(q_words[0], 1, 0xD480D480u);"),
            std::string::npos)
      << cuda;
  EXPECT_EQ(cuda.find("u4x2_to_f16x2"), std::string::npos) << cuda;
  const std::string log = testing::ptxas_report(cuda);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C751"), std::string::npos) << log;
  EXPECT_NE(log.find(" 0 bytes spill stores"), std::string::npos) << log;
}

}  // namespace
}  // namespace tessel
