// FlashAttention tile programs in the CPU interpreter at small sizes, against a float64 reference
// of softmax(Q Kᵀ / sqrt(D)) V: head dim 256 (examples/kernels/flash_attention{,_causal}_d256.tir,
// 64-key tiles) and variable sequence lengths in one batch (flash_attention_varlen{,_causal}.tir:
// packed [T, H, D] tensors, cumulative lengths on the device, find_group and windows whose K and V
// tiles over-read the next sequence finitely, src/ir/grouped.h). Each kernel also runs lowered by
// the default pipeline for sm_90a (producer and consumer roles, rings, persistent tiles, the loop
// rotated by coarse-pipeline) under several schedules and must give the same bits as the tile
// program; its CUDA compiles with NVRTC for sm_90a without spilling. The outputs are poisoned
// (NaN) before each run, so a row left unwritten fails. And the over-read semantics themselves:
// the varlen program with its V tiles marked plain `over_read` (reads past the window reach no
// store, NaN in the interpreter) shows NaN in the output — the promise that program cannot make.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "tessel/example_kernels.h"
#include "sm90a_compile.h"

namespace tessel {
namespace {

using interp::HostTensor;
using ir::ScalarKind;

// f16 inputs, P rounded to f16 for P·V, O rounded to f16: errors near 3e-4 (the GPU test's bound).
constexpr double kTolerance = 2e-3;

std::unique_ptr<ir::Module> parse(const std::string& text, const std::string& name, bool lowered) {
  auto module = ir::parse_module(text, name + ".tir");
  if (lowered) pipeline::lower(*module);
  return module;
}

void fill_random(HostTensor& t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, real(rng));
}

void poison(HostTensor& t) {
  for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, std::numeric_limits<double>::quiet_NaN());
}

// float64 attention of one query row against keys [0, keys) of one (sequence, head): `at(t, c)`
// reads element c of token t of a tensor.
template <typename At>
std::vector<double> reference_row(At q_at, At k_at, At v_at, int64_t row, int64_t keys, int64_t d) {
  std::vector<double> s(keys), acc(d, 0.0);
  double m = -INFINITY;
  for (int64_t j = 0; j < keys; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += q_at(row, c) * k_at(j, c);
    s[j] = dot / std::sqrt(static_cast<double>(d));
    m = std::max(m, s[j]);
  }
  double l = 0;
  for (int64_t j = 0; j < keys; ++j) {
    const double p = std::exp(s[j] - m);
    l += p;
    for (int64_t c = 0; c < d; ++c) acc[c] += p * v_at(j, c);
  }
  for (double& a : acc) a /= l;
  return acc;
}

// ||got - want|| / ||want||; infinity when an output is not finite.
struct ErrorSum {
  double err = 0, norm = 0;
  bool finite = true;
  void add(double got, double want) {
    finite = finite && std::isfinite(got);
    err += (got - want) * (got - want);
    norm += want * want;
  }
  double relative() const { return finite ? std::sqrt(err / norm) : INFINITY; }
};

// ---- head dim 256 ([BH, S, 256] tensors) ----

struct Dense {
  HostTensor q, k, v;
};

HostTensor run_dense(const std::string& name, const Dense& in, int64_t heads, int64_t length,
                     bool lowered, const char* schedule) {
  auto module = parse(examples::lowered_kernels().at(name), name, lowered);
  Dense copy = in;
  HostTensor o(ScalarKind::f16, {heads, length, 256});
  poison(o);
  interp::RunOptions options;
  options.sizes = {{"BH", heads}, {"S", length}};
  options.schedule = interp::Schedule::parse(schedule);
  interp::interpret(*module->kernels.front(), {&copy.q, &copy.k, &copy.v, &o}, options);
  return o;
}

void check_d256(const std::string& name, bool causal, int64_t heads, int64_t length) {
  SCOPED_TRACE(name + " BH=" + std::to_string(heads) + " S=" + std::to_string(length));
  constexpr int64_t d = 256;
  std::mt19937_64 rng(heads * 1000 + length);
  Dense in{HostTensor(ScalarKind::f16, {heads, length, d}),
           HostTensor(ScalarKind::f16, {heads, length, d}),
           HostTensor(ScalarKind::f16, {heads, length, d})};
  fill_random(in.q, rng);
  fill_random(in.k, rng);
  fill_random(in.v, rng);
  const HostTensor o = run_dense(name, in, heads, length, false, "round-robin");
  ErrorSum e;
  for (int64_t h = 0; h < heads; ++h) {
    auto at = [&](const HostTensor& t) {
      return [&t, h, length](int64_t row, int64_t c) {
        return t.get_float((h * length + row) * d + c);
      };
    };
    for (int64_t r = 0; r < length; ++r) {
      const auto want = reference_row(at(in.q), at(in.k), at(in.v), r, causal ? r + 1 : length, d);
      for (int64_t c = 0; c < d; ++c) e.add(o.get_float((h * length + r) * d + c), want[c]);
    }
  }
  EXPECT_LT(e.relative(), kTolerance);
  for (const char* schedule : {"round-robin", "consumer-first", "random:3"}) {
    SCOPED_TRACE(std::string("lowered, ") + schedule);
    const HostTensor lowered = run_dense(name, in, heads, length, true, schedule);
    EXPECT_EQ(lowered.bytes(), o.bytes()) << "the lowered kernel's bits differ";
  }
}

// 150 keys: two whole 64-key tiles and a ragged one, two query tiles (the second ragged).
TEST(AttentionInterp, HeadDim256AgainstFloat64) {
  check_d256("flash_attention_d256", false, 2, 150);
}

// The diagonal tiles masked, the key tiles past the query tile's last row skipped: 200 rows are two
// query tiles of two and four 64-key tiles.
TEST(AttentionInterp, HeadDim256CausalAgainstFloat64) {
  check_d256("flash_attention_causal_d256", true, 2, 200);
}

// ---- variable lengths (packed [T, H, 128] tensors, cumulative lengths) ----

constexpr int64_t kVarlenD = 128;

struct Packed {
  std::vector<int64_t> lengths;
  int64_t heads = 0, total = 0;
  HostTensor q, k, v, ends;
};

Packed make_packed(const std::vector<int64_t>& lengths, int64_t heads, uint64_t seed) {
  int64_t total = 0;
  for (int64_t l : lengths) total += l;
  const int64_t b = static_cast<int64_t>(lengths.size());
  Packed p{lengths,
           heads,
           total,
           HostTensor(ScalarKind::f16, {total, heads, kVarlenD}),
           HostTensor(ScalarKind::f16, {total, heads, kVarlenD}),
           HostTensor(ScalarKind::f16, {total, heads, kVarlenD}),
           HostTensor(ScalarKind::i32, {b})};
  std::mt19937_64 rng(seed);
  fill_random(p.q, rng);
  fill_random(p.k, rng);
  fill_random(p.v, rng);
  int64_t end = 0;
  for (int64_t i = 0; i < b; ++i) p.ends.set_int(i, end += lengths[i]);
  return p;
}

HostTensor run_packed(const std::string& text, const std::string& name, const Packed& in,
                      bool lowered, const char* schedule) {
  auto module = parse(text, name, lowered);
  Packed copy = in;
  HostTensor o(ScalarKind::f16, {in.total, in.heads, kVarlenD});
  poison(o);
  interp::RunOptions options;
  options.sizes = {
      {"T", in.total}, {"H", in.heads}, {"B", static_cast<int64_t>(in.lengths.size())}};
  options.schedule = interp::Schedule::parse(schedule);
  interp::interpret(*module->kernels.front(), {&copy.q, &copy.k, &copy.v, &o, &copy.ends}, options);
  return o;
}

// ||O - ref|| / ||ref|| over every row of every sequence and head.
double packed_error(const Packed& in, const HostTensor& o, bool causal) {
  constexpr int64_t d = kVarlenD;
  ErrorSum e;
  int64_t first = 0;
  for (int64_t len : in.lengths) {
    for (int64_t h = 0; h < in.heads; ++h) {
      auto at = [&](const HostTensor& t) {
        return [&t, h, first, &in](int64_t row, int64_t c) {
          return t.get_float(((first + row) * in.heads + h) * d + c);
        };
      };
      for (int64_t r = 0; r < len; ++r) {
        const auto want = reference_row(at(in.q), at(in.k), at(in.v), r, causal ? r + 1 : len, d);
        for (int64_t c = 0; c < d; ++c)
          e.add(o.get_float(((first + r) * in.heads + h) * d + c), want[c]);
      }
    }
    first += len;
  }
  return e.relative();
}

void check_varlen(const std::string& name, bool causal, const std::vector<int64_t>& lengths,
                  int64_t heads) {
  std::string trace = name + " H=" + std::to_string(heads) + " lengths";
  for (int64_t l : lengths) trace += " " + std::to_string(l);
  SCOPED_TRACE(trace);
  const Packed in = make_packed(lengths, heads, 7 + lengths.size());
  const std::string& text = examples::lowered_kernels().at(name);
  const HostTensor o = run_packed(text, name, in, false, "round-robin");
  EXPECT_LT(packed_error(in, o, causal), kTolerance);
  for (const char* schedule : {"round-robin", "producer-first", "consumer-first", "random:5"}) {
    SCOPED_TRACE(std::string("lowered, ") + schedule);
    const HostTensor lowered = run_packed(text, name, in, true, schedule);
    EXPECT_EQ(lowered.bytes(), o.bytes()) << "the lowered kernel's bits differ";
  }
}

// A sequence of one token, one ending inside the first key tile and the next sequence read past
// it, one of exactly one tile, one spanning three tiles (two ragged ends), and an empty sequence
// (no tiles; the grid's bound leaves tiles past the last sequence, which store nothing).
TEST(AttentionInterp, VarlenAgainstFloat64) {
  check_varlen("flash_attention_varlen", false, {1, 17, 128, 0, 300}, 2);
}

TEST(AttentionInterp, VarlenCausalAgainstFloat64) {
  check_varlen("flash_attention_varlen_causal", true, {1, 17, 128, 0, 300}, 2);
}

// The last sequence ends inside a key tile at the end of the tensor: its tiles read past T.
TEST(AttentionInterp, VarlenLastSequenceRagged) {
  check_varlen("flash_attention_varlen", false, {130, 5}, 1);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t n = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++n;
  }
  EXPECT_GT(n, 0u) << "no '" << from << "' in the program";
  return text;
}

// Why the K and V tiles need `over_read = finite`: with the plain promise (reads past the window
// reach no store; NaN in the interpreter), P·V multiplies the masked columns' zeros by NaN and
// the sequences whose last key tile runs past their end get NaN rows.
TEST(AttentionInterp, VarlenOverReadOfVReachesTheOutput) {
  const std::string name = "flash_attention_varlen";
  const Packed in = make_packed({17, 40}, 1, 3);
  const std::string text =
      replaced(examples::lowered_kernels().at(name), "over_read = finite", "over_read");
  const HostTensor o = run_packed(text, name, in, false, "round-robin");
  EXPECT_TRUE(std::isnan(o.get_float(0))) << "row 0 of sequence 0 should read NaN";
}

// A program that breaks the finite promise (no mask on the key columns: the scores of the next
// sequence's keys, read as the largest finite f16 value, enter the softmax) is grossly wrong.
TEST(AttentionInterp, VarlenUnmaskedOverReadIsWrong) {
  const std::string name = "flash_attention_varlen";
  const Packed in = make_packed({17, 40}, 1, 3);
  const std::string text = replaced(examples::lowered_kernels().at(name),
                                    "%sm = select %inside, %s, %neg_inf", "%sm = max %s, %s");
  const HostTensor o = run_packed(text, name, in, false, "round-robin");
  EXPECT_GT(packed_error(in, o, false), 0.5);
}

// ---- CUDA for sm_90a ----

std::string ptxas_log(const std::string& name) {
  auto module = parse(examples::lowered_kernels().at(name), name, false);
  const CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
  return testing::ptxas_report(kernel.cuda_source());
}

// The 128 x 256 f32 output accumulator is 128 registers of each consumer thread, beside S of
// the next key tile and P of this one (coarse-pipeline); nothing may spill.
TEST(AttentionCuda, HeadDim256AndVarlenCompileWithoutSpills) {
  for (const char* name : {"flash_attention_d256", "flash_attention_causal_d256",
                           "flash_attention_varlen", "flash_attention_varlen_causal"}) {
    SCOPED_TRACE(name);
    const std::string log = ptxas_log(name);
    EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
    EXPECT_NE(log.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace tessel
