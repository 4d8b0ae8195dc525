// The wgmma instances of one mma over K-major 128-byte-swizzled shared tiles (wgmma_ss): shared-
// memory descriptors for A and B, the k16 steps, and each instance's run of accumulator registers.
// emit_async.cpp calls it for every wgmma mma, in either sm_90a mainloop (warp-specialized, or
// pipelined without roles by lower-mainloops): what surrounds it — waits, fences, group commits —
// is the IR's, translated there.
//
// The accumulator is updated in place: each wgmma instance adds into the contiguous run of the
// accumulator's values that the instance's registers are, which is checked at emission time by
// evaluating the accumulator's layout for every thread of the warpgroup (nothing here assumes how
// synthesis ordered the values). An accumulator that starts at zero (a `fill 0.0`) is never
// zeroed: the first k-step of its first wgmma runs with scale-d = 0 (the caller's `scale_d`
// condition). Zeroing registers that a pending wgmma group also writes makes ptxas serialize
// every wgmma (warning C7515, ~20% of the GEMM's speed; test/unit/codegen/emit_sm90_test.cpp
// watches for it).
#include <regex>

#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

// The wgmma C fragment of m64nNk16 (HOPPER.md §1): register i of thread t of the warpgroup.
std::pair<int64_t, int64_t> wgmma_c(int64_t t, int64_t i) {
  int64_t w = t / 32, l = t % 32;
  return {16 * w + l / 4 + 8 * ((i >> 1) & 1), 8 * (i / 4) + 2 * (l % 4) + (i & 1)};
}

}  // namespace

void Emitter::wgmma_ss(const Operation& mma, const std::string& a_base, int64_t a_rows,
                       int64_t a_cols, const std::string& b_base, int64_t b_rows, int64_t b_cols,
                       const std::string& scale_d) {
  static const std::regex atom_re(R"(wgmma\.m64n(\d+)k16\.f32\.(f16|bf16)\.ss)");
  std::smatch m;
  std::string atom = mma.has_attr("atom") ? mma.str_attr("atom") : "";
  if (!std::regex_match(atom, m, atom_re)) {
    unsupported(mma, "has atom '" + atom + "'; sm_90a issues wgmma.m64nNk16.f32.{f16,bf16}.ss");
  }
  const int64_t atom_n = std::stoll(m[1]);
  const std::string type = m[2] == "f16" ? "f16" : "bf16";
  const Reg& acc = reg(mma, mma.operand(2));
  const Plan& plan = *acc.plan;
  if (plan.tile.size() != 2) unsupported(mma, "needs a 2-D accumulator");
  const int64_t tile_m = plan.tile[0], tile_n = plan.tile[1];
  const int64_t tile_k = a_cols;
  if (a_rows != tile_m || b_rows != tile_n || b_cols != tile_k) {
    unsupported(mma, "operand tiles do not match the accumulator " + std::to_string(tile_m) + "x" +
                         std::to_string(tile_n));
  }
  struct Instance {
    int64_t m0 = 0, n0 = 0;  // origin in the accumulator tile
    int64_t base = 0;        // first accumulator value
  };
  // For every warpgroup, the atom instances it holds: origin (m0, n0) and the accumulator value
  // that the instance's register 0 is; registers must follow contiguously, the same run for
  // every thread of the warpgroup.
  const int64_t regs = atom_n / 2;
  const int64_t groups = plan.threads / 128;
  if (plan.threads % 128 != 0) unsupported(mma, "with wgmma needs whole warpgroups of threads");
  std::vector<std::vector<Instance>> per_group(groups);
  for (int64_t g = 0; g < groups; ++g) {
    std::map<std::vector<int64_t>, int64_t> where;  // coordinate -> value, for thread 128g
    for (int64_t v = 0; v < plan.values; ++v) where[plan.coord(128 * g, v)] = v;
    std::vector<bool> covered(plan.values, false);
    for (int64_t m0 = 0; m0 < tile_m; m0 += 64) {
      for (int64_t n0 = 0; n0 < tile_n; n0 += atom_n) {
        auto [r0, c0] = wgmma_c(0, 0);
        auto it = where.find({m0 + r0, n0 + c0});
        if (it == where.end()) continue;  // another warpgroup's instance
        Instance in{m0, n0, it->second};
        bool ok = in.base + regs <= plan.values;
        for (int64_t t = 0; ok && t < 128; ++t) {
          for (int64_t i = 0; ok && i < regs; ++i) {
            auto [r, c] = wgmma_c(t, i);
            ok = plan.coord(128 * g + t, in.base + i) == std::vector<int64_t>{m0 + r, n0 + c};
          }
        }
        if (!ok) {
          unsupported(mma, "accumulator layout " + plan.text +
                               " does not hold each wgmma instance's registers as one contiguous "
                               "run of values");
        }
        for (int64_t i = 0; i < regs; ++i) covered[in.base + i] = true;
        per_group[g].push_back(in);
      }
    }
    if (std::find(covered.begin(), covered.end(), false) != covered.end()) {
      unsupported(mma, "accumulator layout " + plan.text +
                           " is not covered by wgmma instances of its warpgroup");
    }
  }
  // The same instance count and value runs in every warpgroup; origins may differ.
  for (int64_t g = 1; g < groups; ++g) {
    bool same = per_group[g].size() == per_group[0].size();
    for (size_t i = 0; same && i < per_group[g].size(); ++i)
      same = per_group[g][i].base == per_group[0][i].base;
    if (!same) unsupported(mma, "warpgroups hold different accumulator runs");
  }
  auto by_group = [&](auto field) {
    // A C expression selecting per-warpgroup values, e.g. `(tid / 128 == 0 ? 0 : 64)`.
    std::vector<int64_t> values;
    for (int64_t g = 0; g < groups; ++g) values.push_back(field(g));
    bool uniform =
        std::all_of(values.begin(), values.end(), [&](int64_t x) { return x == values[0]; });
    if (uniform) return std::to_string(values[0]);
    std::string e = std::to_string(values.back());
    for (int64_t g = groups - 2; g >= 0; --g)
      e = "(tid / 128 == " + std::to_string(g) + " ? " + std::to_string(values[g]) + " : " + e +
          ")";
    return e;
  };
  line("// " + std::string(mma.name()) + ": " + atom + ", " + std::to_string(per_group[0].size()) +
       " instance(s) per warpgroup x " + std::to_string(tile_k / 16) + " k-steps");
  line("{");
  ++indent_;
  for (size_t i = 0; i < per_group[0].size(); ++i) {
    std::string row = by_group([&](int64_t g) { return per_group[g][i].m0; });
    std::string col = by_group([&](int64_t g) { return per_group[g][i].n0; });
    // Row r of a K-major 128B-swizzled tile starts at r * 128 bytes (8-row atoms of 1024 B).
    line("const unsigned long long desc_a" + std::to_string(i) +
         " = tessel::device::make_smem_descriptor_k_major(tessel::device::smem_u32(" + a_base +
         " + " + row + " * 128), tessel::device::SmemSwizzle::b128);");
    line("const unsigned long long desc_b" + std::to_string(i) +
         " = tessel::device::make_smem_descriptor_k_major(tessel::device::smem_u32(" + b_base +
         " + " + col + " * 128), tessel::device::SmemSwizzle::b128);");
  }
  for (int64_t kk = 0; kk < tile_k / 16; ++kk) {
    for (size_t i = 0; i < per_group[0].size(); ++i) {
      // A k16 step inside the 128-byte swizzle row is +32 bytes of start address.
      std::string step = std::to_string(kk * 2);
      bool overwrite = kk == 0 && !scale_d.empty();
      line("tessel::device::wgmma_ss<" + std::to_string(atom_n) + ", tessel::device::MmaType::" +
           type + ">(*reinterpret_cast<float(*)[" + std::to_string(regs) + "]>(" + acc.name +
           " + " + std::to_string(per_group[0][i].base) + "), desc_a" + std::to_string(i) + " + " +
           step + ", desc_b" + std::to_string(i) + " + " + step +
           (overwrite ? ", " + scale_d : "") + ");");
    }
  }
  --indent_;
  line("}");
}

}  // namespace tessel::target::cuda::detail
