// Flash-decoding (examples/kernels/flash_decode.tir, then flash_decode_combine.tir) in the CPU
// interpreter at small sizes, against a float64 reference of softmax(q Kᵀ / sqrt(D)) V per query
// head: grouped-query (G query heads per KV head) and not, KV lengths that are not multiples of
// the 128-key tiles, split counts the kernel reduces so that no split is empty (the combine must
// then ignore the partial slots nobody wrote: they are poisoned with NaN), more than 16 splits
// (the combine's chunk loop). The decode kernel also runs lowered by the default pipeline for
// sm_90a (producer and consumer roles, rings, persistent units, the loop rotated by
// coarse-pipeline) under several schedules, and must give the same bits as the tile program; and
// both kernels' CUDA compiles with NVRTC for sm_90a.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "target/cuda/emit.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

using interp::HostTensor;
using ir::ScalarKind;

constexpr int64_t kD = 128;

struct Case {
  int64_t kv_heads, group, length, splits;  // BHK, G, L, NS
};

struct Inputs {
  HostTensor q, k, v;
};

Inputs make_inputs(const Case& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  Inputs in{HostTensor(ScalarKind::f16, {c.kv_heads, c.group, kD}),
            HostTensor(ScalarKind::f16, {c.kv_heads, c.length, kD}),
            HostTensor(ScalarKind::f16, {c.kv_heads, c.length, kD})};
  // Q scaled up so that the softmax is far from flat and the splits' weights differ.
  for (int64_t i = 0; i < in.q.size(); ++i) in.q.set_float(i, 3.0 * real(rng));
  for (int64_t i = 0; i < in.k.size(); ++i) in.k.set_float(i, real(rng));
  for (int64_t i = 0; i < in.v.size(); ++i) in.v.set_float(i, real(rng));
  return in;
}

void poison(HostTensor& t) {
  for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, std::numeric_limits<double>::quiet_NaN());
}

std::unique_ptr<ir::Module> example(const std::string& name, bool lowered) {
  auto module = ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
  if (lowered) pipeline::lower(*module);
  return module;
}

// The split kernel's outputs: the partial outputs OP [BHK, G, NS, D] and LSE [BHK, G, NS].
struct Partials {
  HostTensor op, lse;
};

Partials run_split(const Case& c, const Inputs& in, bool lowered, const char* schedule) {
  auto module = example("flash_decode", lowered);
  Partials p{HostTensor(ScalarKind::f32, {c.kv_heads, c.group, c.splits, kD}),
             HostTensor(ScalarKind::f32, {c.kv_heads, c.group, c.splits})};
  poison(p.op);
  poison(p.lse);
  Inputs copy = in;
  interp::RunOptions options;
  options.sizes = {{"BHK", c.kv_heads}, {"G", c.group}, {"L", c.length}, {"NS", c.splits}};
  options.schedule = interp::Schedule::parse(schedule);
  interp::interpret(*module->kernels.front(), {&copy.q, &copy.k, &copy.v, &p.op, &p.lse}, options);
  return p;
}

HostTensor run_combine(const Case& c, const Partials& p) {
  auto module = example("flash_decode_combine", false);
  const int64_t heads = c.kv_heads * c.group;
  // The same memory as [BH, NS, D] and [BH, NS].
  HostTensor op(ScalarKind::f32, {heads, c.splits, kD}), lse(ScalarKind::f32, {heads, c.splits});
  op.bytes() = p.op.bytes();
  lse.bytes() = p.lse.bytes();
  HostTensor o(ScalarKind::f16, {heads, kD});
  poison(o);
  interp::RunOptions options;
  options.sizes = {{"BH", heads}, {"NS", c.splits}};
  interp::interpret(*module->kernels.front(), {&op, &lse, &o, c.length}, options);
  return o;
}

// ||O - ref|| / ||ref|| over every query head, in float64; infinity for a non-finite output.
double error_against_reference(const Case& c, const Inputs& in, const HostTensor& o) {
  double err = 0, norm = 0;
  std::vector<double> s(c.length), acc(kD);
  for (int64_t hk = 0; hk < c.kv_heads; ++hk) {
    for (int64_t g = 0; g < c.group; ++g) {
      const int64_t qb = (hk * c.group + g) * kD, kb = hk * c.length * kD;
      double m = -INFINITY;
      for (int64_t j = 0; j < c.length; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < kD; ++d) dot += in.q.get_float(qb + d) * in.k.get_float(kb + j * kD + d);
        s[j] = dot / std::sqrt(double(kD));
        m = std::max(m, s[j]);
      }
      double l = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < c.length; ++j) {
        const double e = std::exp(s[j] - m);
        l += e;
        for (int64_t d = 0; d < kD; ++d) acc[d] += e * in.v.get_float(kb + j * kD + d);
      }
      for (int64_t d = 0; d < kD; ++d) {
        const double got = o.get_float(qb + d), want = acc[d] / l;
        if (!std::isfinite(got)) return INFINITY;
        err += (got - want) * (got - want);
        norm += want * want;
      }
    }
  }
  return std::sqrt(err / norm);
}

// The number of splits the kernels use for NS asked: cdiv(tiles, cdiv(tiles, NS)).
int64_t used_splits(const Case& c) {
  const int64_t tiles = (c.length + 127) / 128, per = (tiles + c.splits - 1) / c.splits;
  return (tiles + per - 1) / per;
}

// f16 inputs, P rounded to f16 for P V, O rounded to f16: errors near 3e-4.
constexpr double kTolerance = 2e-3;

void check(const Case& c, std::vector<const char*> lowered_schedules) {
  SCOPED_TRACE("BHK=" + std::to_string(c.kv_heads) + " G=" + std::to_string(c.group) +
               " L=" + std::to_string(c.length) + " NS=" + std::to_string(c.splits));
  const Inputs in = make_inputs(c, 17 + c.length);
  const Partials plain = run_split(c, in, false, "round-robin");
  // Every used split of every real row written; the slots past the used splits untouched.
  const int64_t used = used_splits(c);
  for (int64_t r = 0; r < c.kv_heads * c.group; ++r) {
    for (int64_t s = 0; s < c.splits; ++s) {
      EXPECT_EQ(std::isfinite(plain.lse.get_float(r * c.splits + s)), s < used)
          << "LSE of row " << r << " split " << s;
    }
  }
  const HostTensor o = run_combine(c, plain);
  EXPECT_LT(error_against_reference(c, in, o), kTolerance);
  for (const char* schedule : lowered_schedules) {
    SCOPED_TRACE(std::string("lowered, ") + schedule);
    const Partials lowered = run_split(c, in, true, schedule);
    int64_t differ = 0;
    for (int64_t i = 0; i < plain.op.size(); ++i) {
      const bool written = std::isfinite(plain.op.get_float(i));
      differ += written ? plain.op.get_bits(i) != lowered.op.get_bits(i)
                        : std::isfinite(lowered.op.get_float(i));
    }
    for (int64_t i = 0; i < plain.lse.size(); ++i) {
      const bool written = std::isfinite(plain.lse.get_float(i));
      differ += written ? plain.lse.get_bits(i) != lowered.lse.get_bits(i)
                        : std::isfinite(lowered.lse.get_float(i));
    }
    EXPECT_EQ(differ, 0) << "the lowered kernel's partials differ from the tile program's";
  }
}

// Grouped-query: 4 query heads per KV head, 8 tiles in 3 splits (3, 3, 2 tiles), L ragged.
TEST(FlashDecode, GroupedQueryRaggedLength) {
  check({2, 4, 1000, 3}, {"round-robin", "producer-first", "consumer-first", "random:5"});
}

// Multi-head (G = 1): 3 tiles, 7 splits asked, 3 used; the combine skips the poisoned slots.
TEST(FlashDecode, MoreSplitsAskedThanTiles) {
  check({3, 1, 300, 7}, {"producer-first", "random:9"});
}

// One key in the last tile (L = 4097: 33 tiles as 7, 7, 7, 7, 5), 8 query heads per KV head.
TEST(FlashDecode, OneKeyInTheLastTile) { check({1, 8, 4097, 5}, {"round-robin"}); }

// 64 query heads per KV head (the whole tile), one split (the combine only divides).
TEST(FlashDecode, FullGroupOneSplit) { check({1, 64, 200, 1}, {"consumer-first"}); }

// 18 splits of one tile each: two chunks of the combine's loop, the second partial.
TEST(FlashDecode, CombineLoopsOverChunks) { check({1, 2, 2200, 20}, {"random:3"}); }

// Both kernels' CUDA, lowered for sm_90a, compiles with NVRTC (ptxas included). The decode
// kernel is warp-specialized: a TMA producer and one consumer warpgroup issuing wgmma.
TEST(FlashDecode, CompilesForSm90a) {
  for (const char* name : {"flash_decode", "flash_decode_combine"}) {
    SCOPED_TRACE(name);
    auto module = example(name, true);
    target::cuda::EmittedKernel k = target::cuda::emit_cuda(*module->kernels.front());
    if (std::string(name) == "flash_decode") {
      EXPECT_EQ(k.threads, 256);
      EXPECT_NE(k.source.find("tma_load_3d"), std::string::npos);
      EXPECT_NE(k.source.find("wgmma_rs"), std::string::npos);
    } else {
      EXPECT_EQ(k.threads, 32);
    }
    runtime::CompileOptions options;
    options.arch = "sm_90a";
    options.use_cache = false;
    EXPECT_GT(runtime::compile_cuda(k.source, options).cubin.size(), 1000u);
  }
}

}  // namespace
}  // namespace tessel
