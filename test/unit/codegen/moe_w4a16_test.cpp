// The mixed-type MoE expert GEMMs (examples/kernels/moe_w4a16.tir, moe_w8a16.tir with fp8 e4m3
// weights, moe_w4a16_combine.tir with the routing weight and the scatter to the tokens' slots in
// the epilogue): tokens sorted by expert times each expert's int4 weights (stored in the packed
// nibble order) or fp8 weights (stored in permuted 64-column blocks), in the interpreter as written
// and lowered by the default pipeline (roles interleaved, few SMs), against plain loops bit for bit
// — with experts that receive no token, one token, and ragged counts across tile boundaries — and
// its sm_90a CUDA through ptxas (no spills, no serialized wgmma).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "sm90a_compile.h"
#include "support/diagnostics.h"
#include "tessel/example_kernels.h"
#include "w4a16_reference.h"

namespace tessel {
namespace {

using interp::HostTensor;

using testing::fp8_position;
using testing::packed_position;
using testing::round_f16;

// `counts[e]` tokens for expert e (rows of X in expert order), N weight rows, K, group size G;
// `fp8`: moe_w8a16 (e4m3 weights, no zero point) instead of moe_w4a16.
// `combine`: moe_w4a16_combine (row r scaled by a routing weight and stored at row dest[r], dest a
// random permutation of the rows). `gather`: moe_w4a16_gather (row r of X read from token
// token[r] of T = M / 2 + 1 tokens, token random).
// `variant`: a file under bench/kernel-variants/ holding a variant of moe_w4a16 (same arguments)
// checked instead of the example.
void check(const std::vector<int64_t>& counts, int64_t N, int64_t K, int64_t G, bool lowered,
           const char* schedule, bool fp8 = false, bool combine = false, bool gather = false,
           const char* variant = nullptr) {
  const int64_t E = static_cast<int64_t>(counts.size());
  std::vector<int64_t> ends;
  int64_t M = 0;
  for (int64_t c : counts) ends.push_back(M += c);
  SCOPED_TRACE(std::string(lowered ? "lowered " : "as written ") + "E=" + std::to_string(E) +
               " M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" +
               std::to_string(K) + " " + schedule);
  const std::string name = fp8       ? "moe_w8a16"
                           : combine ? "moe_w4a16_combine"
                           : gather  ? "moe_w4a16_gather"
                                     : "moe_w4a16";
  std::string text = examples::lowered_kernels().at(name);
  if (variant) {
    std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/bench/kernel-variants/" + variant);
    ASSERT_TRUE(in) << "cannot read bench/kernel-variants/" << variant;
    std::stringstream all;
    all << in.rdbuf();
    text = all.str();
  }
  auto module = ir::parse_module(text, variant ? variant : name + ".tir");
  ir::verify(*module);
  if (lowered) pipeline::lower(*module);
  std::mt19937_64 rng(20261127 + M * 31 + N);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), scale(0.005, 0.02);
  std::uniform_int_distribution<int> nibble(0, 15);
  const int64_t T = gather ? M / 2 + 1 : M;  // X's rows: the tokens, or the routed rows
  HostTensor x(ir::ScalarKind::f16, {T, K}),
      q(fp8 ? ir::ScalarKind::f8e4m3 : ir::ScalarKind::u4, {E, N, K}),
      s(ir::ScalarKind::f16, {E, K / G, N}), y(ir::ScalarKind::f16, {M, N}),
      row_ends(ir::ScalarKind::i32, {E});
  for (int64_t i = 0; i < x.size(); ++i) x.set_float(i, unit(rng));
  for (int64_t i = 0; i < q.size(); ++i) {  // storage order
    if (fp8) q.set_float(i, 4.0 * unit(rng));  // rounded to e4m3
    else q.set_int(i, nibble(rng));
  }
  for (int64_t i = 0; i < s.size(); ++i) s.set_float(i, scale(rng));
  for (int64_t i = 0; i < y.size(); ++i) y.set_float(i, unit(rng));  // poisoned
  for (int64_t e = 0; e < E; ++e) row_ends.set_int(e, ends[e]);
  HostTensor weight(ir::ScalarKind::f32, {M}), dest(ir::ScalarKind::i32, {M});
  std::vector<int64_t> slot_of(static_cast<size_t>(M));
  for (int64_t r = 0; r < M; ++r) slot_of[static_cast<size_t>(r)] = r;
  if (combine) std::shuffle(slot_of.begin(), slot_of.end(), rng);
  for (int64_t r = 0; r < M; ++r) {
    weight.set_float(r, 0.5 + 0.5 * unit(rng));
    dest.set_int(r, slot_of[static_cast<size_t>(r)]);
  }
  HostTensor token(ir::ScalarKind::i32, {M});
  std::uniform_int_distribution<int64_t> any_token(0, T - 1);
  std::vector<int64_t> token_of(static_cast<size_t>(M));
  for (int64_t r = 0; r < M; ++r) {
    token_of[static_cast<size_t>(r)] = gather ? any_token(rng) : r;
    token.set_int(r, token_of[static_cast<size_t>(r)]);
  }
  std::vector<interp::Argument> args{&x, &q, &s, &y, &row_ends};
  if (combine) args.insert(args.end(), {&weight, &dest});
  if (gather) args.push_back(&token);
  interp::RunOptions options;
  options.sizes = {{"E", E}, {"M", M}, {"N", N}, {"K", K}, {"KG", K / G}};
  if (gather) options.sizes["T"] = T;
  options.sm_count = 3;
  options.schedule = interp::Schedule::parse(schedule);
  interp::interpret(*module->kernels.front(), args, options);
  int64_t bad = 0;
  for (int64_t e = 0, r = 0; e < E; ++e) {
    for (; r < ends[e]; ++r) {
      for (int64_t n = 0; n < N; ++n) {
        float acc = 0.0f;  // the mma's order: k ascending, from +0
        for (int64_t k = 0; k < K; ++k) {
          const int64_t at =
              (e * N + n) * K + k - k % 64 + (fp8 ? fp8_position(k % 64) : packed_position(k % 64));
          const float qc = fp8 ? static_cast<float>(q.get_float(at))
                               : static_cast<float>(q.get_int(at)) - 8.0f;
          const float w = round_f16(qc * static_cast<float>(s.get_float((e * (K / G) + k / G) * N + n)));
          acc = acc + static_cast<float>(x.get_float(token_of[size_t(r)] * K + k)) * w;
        }
        const int64_t row = slot_of[static_cast<size_t>(r)];
        const float want = round_f16(combine ? acc * static_cast<float>(weight.get_float(r)) : acc);
        const float got = static_cast<float>(y.get_float(row * N + n));
        if (got != want && bad++ < 5)
          ADD_FAILURE() << "Y[" << r << "," << n << "] (expert " << e << ") = " << got
                        << ", reference " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(MoeW4A16, MatchesPlainLoopsBitForBit) {
  // Empty experts first, between and last; one token; counts across 64-token tiles.
  const std::vector<int64_t> counts{0, 70, 1, 0, 5, 64, 0};
  check(counts, 136, 128, 64, false, "round-robin");
  check(counts, 136, 128, 64, true, "round-robin");
  check(counts, 136, 128, 64, true, "random:5");
  check({3, 130}, 264, 192, 64, true, "producer-first");
  // Every row its own expert: the grid's bound cdiv(M, 64) + min(E, M) - 1 is tight (5 tiles).
  check({1, 1, 0, 1, 1, 1, 0, 0}, 136, 128, 64, true, "random:2");
}

// 192 tokens per block (bench/python/moe.py's t192): one token tile per expert at 4096 tokens over
// 256 experts, top-8. Counts across 192-token tiles, an expert past one tile, empty and one-token
// experts.
TEST(MoeW4A16, Tokens192VariantMatchesPlainLoopsBitForBit) {
  const char* t192 = "moe/moe_w4a16_t192.tir";
  const std::vector<int64_t> counts{0, 200, 1, 0, 5, 192, 0};
  check(counts, 136, 128, 64, false, "round-robin", false, false, false, t192);
  check(counts, 136, 128, 64, true, "random:5", false, false, false, t192);
  check({3, 400}, 264, 192, 64, true, "producer-first", false, false, false, t192);
}

// The down projection with the weighted combine's scatter: every row lands, scaled, in its slot.
TEST(MoeW4A16Combine, ScattersScaledRowsToTheirSlotsBitForBit) {
  const std::vector<int64_t> counts{0, 70, 1, 0, 5, 64, 0};
  check(counts, 136, 128, 64, false, "round-robin", false, true);
  check(counts, 136, 128, 64, true, "random:5", false, true);
  check({3, 130}, 264, 192, 64, true, "producer-first", false, true);
}

// The up projection reading each routed row from its token (an indirect tile loaded by TMA one
// row a box in the lowered kernel; the interpreter reads the rows through the map).
TEST(MoeW4A16Gather, ReadsEachRowFromItsTokenBitForBit) {
  const std::vector<int64_t> counts{0, 70, 1, 0, 5, 64, 0};
  check(counts, 136, 128, 64, false, "round-robin", false, false, true);
  check(counts, 136, 128, 64, true, "random:5", false, false, true);
  check({3, 130}, 264, 192, 64, true, "producer-first", false, false, true);
}

// A row map that points outside the tensor is the caller's error, reported at the tile.
TEST(MoeW4A16Combine, RefusesARowMapOutsideTheTensor) {
  auto module = ir::parse_module(examples::lowered_kernels().at("moe_w4a16_combine"), "c.tir");
  ir::verify(*module);
  const int64_t E = 1, M = 3, N = 128, K = 64;
  HostTensor x(ir::ScalarKind::f16, {M, K}), q(ir::ScalarKind::u4, {E, N, K}),
      s(ir::ScalarKind::f16, {E, 1, N}), y(ir::ScalarKind::f16, {M, N}),
      ends(ir::ScalarKind::i32, {E}), weight(ir::ScalarKind::f32, {M}),
      dest(ir::ScalarKind::i32, {M});
  ends.set_int(0, M);
  for (int64_t r = 0; r < M; ++r) dest.set_int(r, r == 1 ? M : r);
  interp::RunOptions options;
  options.sizes = {{"E", E}, {"M", M}, {"N", N}, {"K", K}, {"KG", 1}};
  try {
    interp::interpret(*module->kernels.front(), {&x, &q, &s, &y, &ends, &weight, &dest}, options);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the row map %dest sends position 1 to row 3, outside "
                                         "the 3 of %Y"),
              std::string::npos)
        << e.what();
  }
}

TEST(MoeW8A16, MatchesPlainLoopsBitForBit) {
  const std::vector<int64_t> counts{0, 70, 1, 0, 5, 64, 0};
  check(counts, 136, 128, 64, false, "round-robin", true);
  check(counts, 136, 128, 64, true, "random:5", true);
  check({3, 130}, 264, 192, 64, true, "producer-first", true);
}

TEST(MoeW4A16, CompilesForSm90aWithoutSpills) {
  for (const char* name : {"moe_w4a16", "moe_w8a16", "moe_w4a16_combine", "moe_w4a16_gather"}) {
    SCOPED_TRACE(name);
    auto module = ir::parse_module(examples::lowered_kernels().at(name), name);
    const std::string log = testing::ptxas_report(
        testing::compile_sm90a_source(*module->kernels.front()).cuda_source());
    EXPECT_NE(log.find("Used"), std::string::npos) << log;
    EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
    EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
    EXPECT_NE(log.find(", 0 bytes spill stores"), std::string::npos) << log;
  }
}

// The fp8 experts' weights: one 16-byte read per row of a thread's fragment (the permuted
// blocks), and one cvt per pair of values.
TEST(MoeW8A16, ReadsRunsOf16BytesAndConvertsPairs) {
  auto module = ir::parse_module(examples::lowered_kernels().at("moe_w8a16"), "moe_w8a16.tir");
  const std::string cuda = testing::compile_sm90a_source(*module->kernels.front()).cuda_source();
  EXPECT_NE(cuda.find("ld.shared.b128, 1 address class"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("fp8x2_to_f16x2<tessel::device::Fp8::e4m3>((unsigned short)(q_words[0]))"),
            std::string::npos)
      << cuda;
}

// The experts' packed weights are read as gemm_w4a16_packed's are: 8-byte fragment reads and the
// one-lop3 unpack with the zero point folded.
TEST(MoeW4A16, ReadsPackedFragmentsAsWords) {
  auto module = ir::parse_module(examples::lowered_kernels().at("moe_w4a16"), "moe_w4a16.tir");
  const std::string cuda = testing::compile_sm90a_source(*module->kernels.front()).cuda_source();
  EXPECT_NE(cuda.find("ld.shared.b64"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("u4_pair_to_f16x2("), std::string::npos) << cuda;
}

}  // namespace
}  // namespace tessel
