// The wgmma instances of one mma over 128-byte-swizzled shared tiles (wgmma_ss): shared-memory
// descriptors for A and B, the k16 steps, and each instance's run of accumulator registers.
// emit_async.cpp calls it for every wgmma mma, in either sm_90a mainloop (warp-specialized, or
// pipelined without roles by lower-mainloops): what surrounds it — waits, fences, group commits —
// is the IR's, translated there.
//
// Operands. Each of A ([M,K]) and B ([K,N]) is read K-major or MN-major (HOPPER.md §1-2), which
// is read off its shared layout, checked element by element against the two canonical 128-byte
// swizzled forms (WgmmaOperand): K-major, rows of 64 K values (128 bytes) in 8-row atoms of 1024
// bytes, K beyond 64 in further column blocks of MN x 64; MN-major, rows of 64 M or N values in
// atoms of 8 K-rows, K rows 128 bytes apart, further 64-wide MN blocks K x 128 bytes apart (the
// descriptor's LBO; HOPPER.md's measured LBO = 8192, SBO = 1024 for K = 64). An MN-major tile
// narrower than 64 (few tokens as the swapped GEMM's N) is 32- or 64-byte swizzled by synthesis:
// rows of 16 or 32 values, the same form with `swizzle` for 128 (PTX 9.7.16.3's canonical
// MN-major layouts: LBO between MN atoms, SBO between 8-K-row groups). A program writes a
// K-major B as the transpose of an [N,K] tile and an MN-major A as the transpose of a [K,M] one;
// the transpose flag of the instruction follows the operand (f16 and bf16 only).
//
// The accumulator is updated in place: each wgmma instance adds into the contiguous run of the
// accumulator's values that the instance's registers are, which is checked at emission time by
// evaluating the accumulator's layout for every thread of the warpgroup (nothing here assumes how
// synthesis ordered the values). An accumulator that starts at zero (a `fill 0.0`) is never
// zeroed: the first k-step of its first wgmma runs with scale-d = 0 (the caller's `scale_d`
// condition). Zeroing registers that a pending wgmma group also writes makes ptxas serialize
// every wgmma (warning C7515, ~20% of the GEMM's speed; test/unit/codegen/emit_sm90_test.cpp
// watches for it).
#include <functional>
#include <optional>
#include <regex>
#include <utility>

#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

// The wgmma C fragment of m64nNk16 (HOPPER.md §1): register i of thread t of the warpgroup.
std::pair<int64_t, int64_t> wgmma_c(int64_t t, int64_t i) {
  int64_t w = t / 32, l = t % 32;
  return {16 * w + l / 4 + 8 * ((i >> 1) & 1), 8 * (i / 4) + 2 * (l % 4) + (i & 1)};
}

// How wgmma reads one operand: its major-ness and the element offset (before the swizzle) of
// element (mn, k), from which the descriptors' start addresses, LBO and SBO and the k steps
// follow. A swizzled row of `swizzle` bytes (128; 64 for a K-major tile whose K is 32 16-bit or
// 64 8-bit values; 64 or 32 for an MN-major tile of 32 or 16 M or N values) holds `row`
// elements: 64 of 16 bits, 128 of 8 bits in a 128-byte row (FP8, which wgmma reads K-major only).
struct WgmmaOperand {
  bool mn_major = false;
  int64_t mn = 0, k = 0;  // the operand's extents: M or N, and K
  int64_t bytes = 2;      // per element
  int64_t swizzle = 128;  // bytes of a swizzled row

  int64_t row() const { return swizzle / bytes; }
  int64_t offset(int64_t r, int64_t c) const {
    const int64_t w = row();
    return mn_major ? (r / w) * w * k + c * w + r % w : (c / w) * w * mn + r * w + c % w;
  }
  // Bytes between MN atoms (MN-major: K rows of `swizzle` bytes); ignored for K-major (CUTLASS
  // writes 16 bytes).
  int64_t lbo_bytes() const { return mn_major ? swizzle * k : 16; }
  // Bytes between 8-row groups: 8 swizzled rows, dense (1024 for 128-byte rows, 512 for 64-byte
  // ones: HOPPER.md's descriptor table, from CUTLASS's canonical GMMA layouts and PTX 9.7.16.3).
  int64_t sbo_bytes() const { return 8 * swizzle; }
  std::string swizzle_mode() const {
    return swizzle == 32   ? "tessel::device::SmemSwizzle::b32"
           : swizzle == 64 ? "tessel::device::SmemSwizzle::b64"
                           : "tessel::device::SmemSwizzle::b128";
  }
};

// The form in which `s` (A when `is_b` is false, B otherwise) can be read by wgmma, or nullopt.
std::optional<WgmmaOperand> wgmma_operand(const SharedTile& s, bool is_b) {
  const bool fp8 = s.element == ScalarKind::f8e4m3 || s.element == ScalarKind::f8e5m2;
  if (s.shape.size() != 2 ||
      (s.element != ScalarKind::f16 && s.element != ScalarKind::bf16 && !fp8))
    return std::nullopt;
  // The 128-byte swizzle in element offsets: 16-byte units are 8 elements of 16 bits, 16 of 8;
  // the 64-byte swizzle permutes four units, the 32-byte one two (MN-major 16-bit only).
  const std::string sw128 = fp8 ? "Sw<3,4,3> o 0 o " : "Sw<3,3,3> o 0 o ";
  const std::string sw64 = fp8 ? "Sw<2,4,3> o 0 o " : "Sw<2,3,3> o 0 o ";
  const std::string sw32 = fp8 ? "Sw<1,4,3> o 0 o " : "Sw<1,3,3> o 0 o ";
  int64_t swizzle = 0;
  if (s.layout.rfind(sw128, 0) == 0) swizzle = 128;
  if (s.layout.rfind(sw64, 0) == 0) swizzle = 64;
  if (s.layout.rfind(sw32, 0) == 0) swizzle = 32;
  if (swizzle == 0) return std::nullopt;
  const SharedMap map = shared_map(s.layout);
  const int64_t rows = s.shape[0], cols = s.shape[1];
  if (static_cast<int64_t>(map.base.size()) != rows * cols) return std::nullopt;
  for (bool mn_major : {false, true}) {
    WgmmaOperand w{mn_major, is_b ? cols : rows, is_b ? rows : cols, fp8 ? 1 : 2, swizzle};
    // MN-major: 16-bit only; K-major: 128- and 64-byte rows (a 32-byte K-major row is never
    // what synthesis makes of a wgmma operand).
    if (mn_major ? fp8 : swizzle == 32) continue;
    if (w.k % (32 / w.bytes) != 0 ||
        (mn_major ? w.mn % w.row() != 0 || w.k % 8 != 0 : w.k % w.row() != 0 || w.mn % 8 != 0)) {
      continue;
    }
    bool same = true;
    for (int64_t c = 0; same && c < cols; ++c) {
      for (int64_t r = 0; same && r < rows; ++r) {
        same =
            map.base[static_cast<size_t>(r + rows * c)] == (is_b ? w.offset(c, r) : w.offset(r, c));
      }
    }
    if (same) return w;
  }
  return std::nullopt;
}

}  // namespace

// For every warpgroup of `plan` (an mma's accumulator over whole warpgroups), the wgmma
// instances of atom width `atom_n` it holds: origin (m0, n0) and the accumulator value that the
// instance's register 0 is; registers must follow contiguously, the same run for every thread of
// the warpgroup, and the same runs in every warpgroup (origins may differ).
std::vector<std::vector<WgmmaInstance>> Emitter::wgmma_instances(const Operation& mma,
                                                                 const Plan& plan, int64_t atom_n) {
  const int64_t tile_m = plan.tile[0], tile_n = plan.tile[1];
  const int64_t regs = atom_n / 2;
  const int64_t groups = plan.threads / 128;
  if (plan.threads % 128 != 0) unsupported(mma, "with wgmma needs whole warpgroups of threads");
  std::vector<std::vector<WgmmaInstance>> per_group(groups);
  for (int64_t g = 0; g < groups; ++g) {
    std::map<std::vector<int64_t>, int64_t> where;  // coordinate -> value, for thread 128g
    for (int64_t v = 0; v < plan.values; ++v) where[plan.coord(128 * g, v)] = v;
    std::vector<bool> covered(plan.values, false);
    for (int64_t m0 = 0; m0 < tile_m; m0 += 64) {
      for (int64_t n0 = 0; n0 < tile_n; n0 += atom_n) {
        auto [r0, c0] = wgmma_c(0, 0);
        auto it = where.find({m0 + r0, n0 + c0});
        if (it == where.end()) continue;  // another warpgroup's instance
        WgmmaInstance in{m0, n0, it->second};
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
  for (int64_t g = 1; g < groups; ++g) {
    bool same = per_group[g].size() == per_group[0].size();
    for (size_t i = 0; same && i < per_group[g].size(); ++i)
      same = per_group[g][i].base == per_group[0][i].base;
    if (!same) unsupported(mma, "warpgroups hold different accumulator runs");
  }
  return per_group;
}

// A C expression selecting per-warpgroup values, e.g. `(tid / 128 == 0 ? 0 : 64)`; `index` is
// the C expression of the warpgroup index (Emitter::warpgroup_index_).
std::string per_warpgroup_expr(int64_t groups, const std::function<int64_t(int64_t)>& field,
                               const std::string& index) {
  std::vector<int64_t> values;
  for (int64_t g = 0; g < groups; ++g) values.push_back(field(g));
  bool uniform =
      std::all_of(values.begin(), values.end(), [&](int64_t x) { return x == values[0]; });
  if (uniform) return std::to_string(values[0]);
  std::string e = std::to_string(values.back());
  for (int64_t g = groups - 2; g >= 0; --g)
    e = "(" + index + " == " + std::to_string(g) + " ? " + std::to_string(values[g]) + " : " + e +
        ")";
  return e;
}

void Emitter::wgmma_ss(const Operation& mma, const SharedTile& a, const SharedTile& b,
                       const std::string& scale_d) {
  static const std::regex atom_re(R"(wgmma\.m64n(\d+)k(16|32)\.f32\.(f16|bf16|f8e4m3|f8e5m2)\.ss)");
  std::smatch m;
  std::string atom = mma.has_attr("atom") ? mma.str_attr("atom") : "";
  if (!std::regex_match(atom, m, atom_re) || (m[2] == "32") != (m[3].str().rfind("f8", 0) == 0)) {
    unsupported(mma, "has atom '" + atom +
                         "'; sm_90a issues wgmma.m64nNk16.f32.{f16,bf16}.ss and "
                         "wgmma.m64nNk32.f32.{f8e4m3,f8e5m2}.ss");
  }
  const int64_t atom_n = std::stoll(m[1]);
  const int64_t atom_k = std::stoll(m[2]);
  const bool fp8 = atom_k == 32;
  // The device library's operand types: wgmma_ss<N, f16|bf16, ...>, wgmma_ss_fp8<N, A, B>.
  const std::string type = m[3] == "f16"      ? "f16"
                           : m[3] == "bf16"   ? "bf16"
                           : m[3] == "f8e4m3" ? "e4m3"
                                              : "e5m2";
  std::optional<WgmmaOperand> forms[2] = {wgmma_operand(a, false), wgmma_operand(b, true)};
  for (int i = 0; i < 2; ++i) {
    if (forms[i]) continue;
    const SharedTile& s = i == 0 ? a : b;
    unsupported(
        mma, std::string("reads ") + (i == 0 ? "A" : "B") + " from a shared tile in layout " +
                 s.layout + " over " + ir::to_string(ir::Shape(s.shape.begin(), s.shape.end())) +
                 "; wgmma takes tiles 128-byte swizzled K-major (" +
                 (i == 0 ? "[M,K] with K a multiple of 64" : "the transpose of [N,K]") +
                 ") or, 16-bit only, MN-major (" + (i == 0 ? "the transpose of [K,M]" : "[K,N]") +
                 " in 32-, 64- or 128-byte swizzled atoms of 16, 32 or 64 columns) as "
                 "layout synthesis makes them");
  }
  const WgmmaOperand& fa = *forms[0];
  const WgmmaOperand& fb = *forms[1];
  const Reg& acc = reg(mma, mma.operand(2));
  const Plan& plan = *acc.plan;
  if (plan.tile.size() != 2) unsupported(mma, "needs a 2-D accumulator");
  const int64_t tile_m = plan.tile[0], tile_n = plan.tile[1];
  const int64_t tile_k = fa.k;
  if (fa.mn != tile_m || fb.mn != tile_n || fb.k != tile_k) {
    unsupported(mma, "operand tiles do not match the accumulator " + std::to_string(tile_m) + "x" +
                         std::to_string(tile_n));
  }
  if (fa.bytes != fb.bytes || (fa.bytes == 1) != fp8) {
    unsupported(mma, "has atom '" + atom + "' over operands of " + std::to_string(fa.bytes) +
                         " and " + std::to_string(fb.bytes) + " byte(s) per element");
  }
  const std::vector<std::vector<WgmmaInstance>> per_group = wgmma_instances(mma, plan, atom_n);
  const int64_t regs = atom_n / 2;
  const int64_t groups = plan.threads / 128;
  auto by_group = [&](auto field) { return per_warpgroup_expr(groups, field, warpgroup_index_); };
  line("// " + std::string(mma.name()) + ": " + atom + ", " + std::to_string(per_group[0].size()) +
       " instance(s) per warpgroup x " + std::to_string(tile_k / atom_k) + " k-steps");
  line("{");
  ++indent_;
  // Descriptors per instance: the start of its rows (an MN-major operand's instances start on its
  // swizzle atoms: 64, 32 or 16 values wide), advanced by whole 16-byte units per k16 step.
  for (const auto& [f, what] : {std::pair{&fa, "A"}, std::pair{&fb, "B"}}) {
    for (size_t i = 0; f->mn_major && i < per_group[0].size(); ++i) {
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t origin = f == &fa ? per_group[g][i].m0 : per_group[g][i].n0;
        if (origin % f->row() != 0) {
          unsupported(mma, std::string("reads its MN-major ") + what + " from row " +
                               std::to_string(origin) + ", inside a " + std::to_string(f->row()) +
                               "-wide swizzle atom (an instance of atom " + atom +
                               " narrower than the atom)");
        }
      }
    }
  }
  auto descriptor = [&](const WgmmaOperand& f, const std::string& base, const std::string& start) {
    return f.mn_major ? "tessel::device::make_smem_descriptor(tessel::device::smem_u32(" + base +
                            " + " + start + "), " + std::to_string(f.lbo_bytes()) + ", " +
                            std::to_string(f.sbo_bytes()) + ", " + f.swizzle_mode() + ")"
                      : "tessel::device::make_smem_descriptor_k_major(tessel::device::smem_u32(" +
                            base + " + " + start + "), " + f.swizzle_mode() + ")";
  };
  for (size_t i = 0; i < per_group[0].size(); ++i) {
    std::string row =
        by_group([&](int64_t g) { return fa.bytes * fa.offset(per_group[g][i].m0, 0); });
    std::string col =
        by_group([&](int64_t g) { return fb.bytes * fb.offset(per_group[g][i].n0, 0); });
    line("const tessel::device::SmemDescriptor desc_a" + std::to_string(i) + " = " +
         descriptor(fa, a.base, row) + ";");
    line("const tessel::device::SmemDescriptor desc_b" + std::to_string(i) + " = " +
         descriptor(fb, b.base, col) + ";");
  }
  const std::string trans =
      std::string(fa.mn_major || fb.mn_major ? ", " : "") +
      (fa.mn_major || fb.mn_major ? std::to_string(fa.mn_major) + ", " + std::to_string(fb.mn_major)
                                  : "");
  const std::string call = fp8 ? "tessel::device::wgmma_ss_fp8<" + std::to_string(atom_n) +
                                     ", tessel::device::MmaType::" + type +
                                     ", tessel::device::MmaType::" + type + ">"
                               : "tessel::device::wgmma_ss<" + std::to_string(atom_n) +
                                     ", tessel::device::MmaType::" + type + trans + ">";
  for (int64_t kk = 0; kk < tile_k / atom_k; ++kk) {
    for (size_t i = 0; i < per_group[0].size(); ++i) {
      // A k step (32 bytes of K: k16 of 16-bit, k32 of FP8) moves the start address by whole
      // 16-byte units: +32 bytes inside a K-major 128-byte row (the next row's worth of K values
      // in the next column block), 16 rows of `swizzle` bytes in an MN-major tile.
      const int64_t k0 = atom_k * kk;
      const std::string step_a =
          std::to_string(fa.bytes * (fa.offset(0, k0) - fa.offset(0, 0)) / 16);
      const std::string step_b =
          std::to_string(fb.bytes * (fb.offset(0, k0) - fb.offset(0, 0)) / 16);
      bool overwrite = kk == 0 && !scale_d.empty();
      line(call + "(*reinterpret_cast<float(*)[" + std::to_string(regs) + "]>(" + acc.name + " + " +
           std::to_string(per_group[0][i].base) + "), desc_a" + std::to_string(i) + " + " + step_a +
           ", desc_b" + std::to_string(i) + " + " + step_b + (overwrite ? ", " + scale_d : "") +
           ");");
    }
  }
  --indent_;
  line("}");
}

// The RS form: A [M,K] in registers, in the layout of a wgmma accumulator over M x K (the first
// GEMM's accumulator, cast to 16 bits: the FA3 observation), B from shared memory as in
// wgmma_ss. For every instance (m0, n0) and k16 step kk, each thread's A fragment is the 8
// values at wgmma_c(t, 0..7) + (m0, 16 kk) — the accumulator fragment of an n16 instance — packed
// in pairs into 4 registers; which of A's values they are is read off A's layout for every thread
// of the warpgroup and must be the same for all of them.
void Emitter::wgmma_rs(const Operation& mma, const Reg& a, const SharedTile& b,
                       const std::string& scale_d) {
  static const std::regex atom_re(R"(wgmma\.m64n(\d+)k16\.f32\.(f16|bf16)\.rs)");
  std::smatch m;
  std::string atom = mma.has_attr("atom") ? mma.str_attr("atom") : "";
  if (!std::regex_match(atom, m, atom_re)) {
    unsupported(mma, "takes A from registers with atom '" + atom +
                         "'; sm_90a issues wgmma.m64nNk16.f32.{f16,bf16}.rs");
  }
  const int64_t atom_n = std::stoll(m[1]);
  const std::string type = m[2];
  if (a.element != (type == "f16" ? ScalarKind::f16 : ScalarKind::bf16)) {
    unsupported(mma, "has atom '" + atom + "' but A holds " +
                         std::string(ir::to_string(a.element)) + " values");
  }
  std::optional<WgmmaOperand> form = wgmma_operand(b, true);
  if (!form) {
    unsupported(mma,
                "reads B from a shared tile in layout " + b.layout + " over " +
                    ir::to_string(ir::Shape(b.shape.begin(), b.shape.end())) +
                    "; wgmma takes tiles 128-byte swizzled, K-major (the transpose of "
                    "[N,K]) or MN-major ([K,N] in 32-, 64- or 128-byte swizzled atoms of 16, 32 "
                    "or 64 columns), or 64-byte swizzled K-major");
  }
  const WgmmaOperand& fb = *form;
  const Reg& acc = reg(mma, mma.operand(2));
  const Plan& plan = *acc.plan;
  const Plan& pa = *a.plan;
  if (plan.tile.size() != 2 || pa.tile.size() != 2) unsupported(mma, "needs 2-D operands");
  const int64_t tile_m = plan.tile[0], tile_n = plan.tile[1], tile_k = pa.tile[1];
  if (pa.tile[0] != tile_m || fb.mn != tile_n || fb.k != tile_k || tile_k % 16 != 0) {
    unsupported(mma, "operand tiles do not match the accumulator " + std::to_string(tile_m) + "x" +
                         std::to_string(tile_n));
  }
  if (pa.threads != plan.threads) unsupported(mma, "has A and C over different threads");
  const std::vector<std::vector<WgmmaInstance>> per_group = wgmma_instances(mma, plan, atom_n);
  const int64_t regs = atom_n / 2;
  const int64_t groups = plan.threads / 128;
  // A's values per (instance, k step): the 8 values of the fragment, the same for every thread.
  auto fragment = [&](size_t i, int64_t kk) {
    std::vector<int64_t> values(8, -1);
    for (int64_t g = 0; g < groups; ++g) {
      std::map<std::vector<int64_t>, int64_t> where;
      for (int64_t v = 0; v < pa.values; ++v) where[pa.coord(128 * g, v)] = v;
      const int64_t m0 = per_group[g][i].m0;
      for (int64_t t = 0; t < 128; ++t) {
        if (t == 0) {
          for (int64_t j = 0; j < 8; ++j) {
            auto [r, c] = wgmma_c(t, j);
            auto it = where.find({m0 + r, 16 * kk + c});
            if (it == where.end() || (g > 0 && it->second != values[j])) {
              unsupported(mma, "takes A in layout " + pa.text +
                                   ", which does not hold the wgmma A fragment of its warpgroup's "
                                   "rows (the accumulator layout of an m64nK mma)");
            }
            values[j] = it->second;
          }
        }
        for (int64_t j = 0; j < 8; ++j) {
          auto [r, c] = wgmma_c(t, j);
          if (pa.coord(128 * g + t, values[j]) != std::vector<int64_t>{m0 + r, 16 * kk + c}) {
            unsupported(mma, "takes A in layout " + pa.text +
                                 ", in which the threads of a warpgroup hold the wgmma A fragment "
                                 "in different values");
          }
        }
      }
    }
    return values;
  };
  auto by_group = [&](auto field) { return per_warpgroup_expr(groups, field, warpgroup_index_); };
  line("// " + std::string(mma.name()) + ": " + atom + ", " + std::to_string(per_group[0].size()) +
       " instance(s) per warpgroup x " + std::to_string(tile_k / 16) + " k-steps, A in registers");
  line("{");
  ++indent_;
  const std::string pack =
      type == "bf16" ? "tessel::device::pack_bf16x2(" : "tessel::device::pack_f16x2(";
  for (size_t i = 0; i < per_group[0].size(); ++i) {
    std::string col =
        by_group([&](int64_t g) { return fb.bytes * fb.offset(per_group[g][i].n0, 0); });
    const std::string desc =
        fb.mn_major ? "tessel::device::make_smem_descriptor(tessel::device::smem_u32(" + b.base +
                          " + " + col + "), " + std::to_string(fb.lbo_bytes()) + ", " +
                          std::to_string(fb.sbo_bytes()) + ", " + fb.swizzle_mode() + ")"
                    : "tessel::device::make_smem_descriptor_k_major(tessel::device::smem_u32(" +
                          b.base + " + " + col + "), " + fb.swizzle_mode() + ")";
    line("const tessel::device::SmemDescriptor desc_b" + std::to_string(i) + " = " + desc + ";");
  }
  const std::string call = "tessel::device::wgmma_rs<" + std::to_string(atom_n) +
                           ", tessel::device::MmaType::" + type + ", " +
                           std::to_string(fb.mn_major ? 1 : 0) + ">";
  // Every fragment first, then one fence, then the k steps: the wgmmas read registers that no
  // instruction after the fence writes.
  for (int64_t kk = 0; kk < tile_k / 16; ++kk) {
    for (size_t i = 0; i < per_group[0].size(); ++i) {
      const std::vector<int64_t> v = fragment(i, kk);
      std::string frag = "frag" + std::to_string(kk) + "_" + std::to_string(i);
      std::string packs;
      for (int j = 0; j < 4; ++j) {
        if (a.packed) {
          // A carried across a loop's back edge is held as 16-bit pairs (coarse-pipeline's P):
          // each fragment register is one of its words when the pair is one of A's pairs.
          if (v[2 * j] % 2 != 0 || v[2 * j + 1] != v[2 * j] + 1) {
            unsupported(mma, "takes A packed in pairs whose values (" + std::to_string(v[2 * j]) +
                                 ", " + std::to_string(v[2 * j + 1]) +
                                 ") are not one word of the wgmma A fragment");
          }
          packs += (j ? ", " : "") + a.name + "[" + std::to_string(v[2 * j] / 2) + "]";
          continue;
        }
        packs += (j ? ", " : "") + pack + a.name + "[" + std::to_string(v[2 * j]) + "], " + a.name +
                 "[" + std::to_string(v[2 * j + 1]) + "])";
      }
      line("const unsigned " + frag + "[4] = {" + packs + "};");
    }
  }
  line("tessel::device::wgmma_fence();");
  for (int64_t kk = 0; kk < tile_k / 16; ++kk) {
    for (size_t i = 0; i < per_group[0].size(); ++i) {
      std::string frag = "frag" + std::to_string(kk) + "_" + std::to_string(i);
      const std::string step_b =
          std::to_string(fb.bytes * (fb.offset(0, 16 * kk) - fb.offset(0, 0)) / 16);
      bool overwrite = kk == 0 && !scale_d.empty();
      line(call + "(*reinterpret_cast<float(*)[" + std::to_string(regs) + "]>(" + acc.name + " + " +
           std::to_string(per_group[0][i].base) + "), " + frag + ", desc_b" + std::to_string(i) +
           " + " + step_b + (overwrite ? ", " + scale_d : "") + ");");
    }
  }
  --indent_;
  line("}");
}

}  // namespace tessel::target::cuda::detail
