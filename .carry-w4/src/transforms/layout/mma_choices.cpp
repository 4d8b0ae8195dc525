// The mma instruction-selection candidates: atoms tiled over an mma, and their analytic cost.
#include "transforms/layout/mma_choices.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "support/diagnostics.h"
#include "transforms/layout/layout_utils.h"

namespace tessel::transforms {

using ir::ScalarKind;
using layout::IntTuple;
using layout::Layout;
using layout::TVLayout;
using target::cuda::Atom;

namespace {}  // namespace

// ---- mma tilings and their cost ----------------------------------------------------------------

std::string MmaChoice::str() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s x[%lld,%lld] threads %lld: %lld instr, mma %.0f cyc, smem %.0f cyc, %lld acc "
                "regs/thread%s -> %.0f cyc",
                atom.name.c_str(), static_cast<long long>(tm), static_cast<long long>(tn),
                static_cast<long long>(threads), static_cast<long long>(instructions), mma_cycles,
                smem_cycles, static_cast<long long>(c.num_values()),
                feasible ? "" : " (over the register budget)", cycles);
  return buf;
}

MmaChoice tile_mma(const Atom& atom, int64_t m, int64_t n, int64_t k, int64_t tm, int64_t tn) {
  TESSEL_ASSERT(atom.kind == target::cuda::AtomKind::mma, "tile_mma of a non-mma atom");
  if (m % (atom.m * tm) != 0 || n % (atom.n * tn) != 0 || k % atom.k != 0) {
    user_error(SourceLocation::unknown(), atom.name, " tiled ", tm, "x", tn,
               " does not divide an mma of [", m, ",", n, ",", k, "]");
  }
  MmaChoice out;
  out.atom = atom;
  out.tm = tm;
  out.tn = tn;
  out.threads = atom.group_threads * tm * tn;
  out.c = tile_atom(*atom.c, m, n, tm, tn);
  int64_t rm = m / (atom.m * tm), rn = n / (atom.n * tn), rk = k / atom.k;
  // A over (M,K): groups along N hold the same rows (stride 0).
  auto operand = [&](const TVLayout& frag, int64_t rows, int64_t t_along, int64_t t_other,
                     int64_t r_along, bool a_side) {
    int64_t fa = frag.tile_shape()[0].as_int(), fk = frag.tile_shape()[1].as_int();
    Layout embed(IntTuple::tuple({fa, fk}), IntTuple::tuple({1, rows}));
    Layout inner = layout::composition(embed, frag.layout());
    // A descriptor operand (one thread) is read by the group as a whole: no thread modes.
    bool whole = frag.num_threads() == 1;
    std::vector<Layout> threads = {inner.mode(0)};
    if (!whole) {
      if (a_side) {
        threads.push_back(single(t_along, fa));
        threads.push_back(single(t_other, 0));
      } else {
        threads.push_back(single(t_other, 0));
        threads.push_back(single(t_along, fa));
      }
    }
    std::vector<Layout> values = {inner.mode(1), single(r_along, fa * (whole ? 1 : t_along)),
                                  single(rk, rows * fk)};
    if (whole) values[1] = single(r_along * t_along, fa);
    return TVLayout(layout::make_layout({tidy(threads), tidy(values)}), IntTuple::tuple({rows, k}));
  };
  out.a = operand(*atom.a, m, tm, tn, rm, true);
  out.b = operand(*atom.b, n, tn, tm, rn, false);
  out.instructions = (m / atom.m) * (n / atom.n) * rk;
  return out;
}

namespace {

void cost(MmaChoice& c, ScalarKind ab, bool a_in_registers, bool b_in_registers) {
  const Atom& atom = c.atom;
  double esize = ir::bit_width(ab) / 8.0;
  int64_t m = c.c.tile_shape()[0].as_int(), n = c.c.tile_shape()[1].as_int();
  int64_t k = c.a.tile_shape()[1].as_int();
  double macs_per_cycle = double(atom.m) * atom.n * atom.k / atom.cost.issue_cycles;
  c.mma_cycles = double(m) * n * k / macs_per_cycle;
  // mma.sync runs on the tensor cores of the issuing warp's SM sub-partition: fewer than 4 warps
  // leave some of the SM's 4 idle (a warpgroup's wgmma spans all 4).
  if (atom.group_threads == 32) c.mma_cycles *= 4.0 / double(std::min<int64_t>(4, c.tm * c.tn));
  double bytes = 0;
  if (atom.group_threads == 128) {
    // wgmma reads its shared operands itself, every instruction.
    double per =
        (atom.a_in_registers ? 0 : 64.0 * atom.k * esize) + double(atom.n) * atom.k * esize;
    bytes = per * c.instructions;
  } else {
    // mma.sync: each warp loads its rows of A and columns of B into registers.
    int64_t warps = c.tm * c.tn;
    if (!a_in_registers) bytes += double(warps) * (m / c.tm) * k * esize;
    if (!b_in_registers) bytes += double(warps) * (n / c.tn) * k * esize;
  }
  c.smem_cycles = bytes / kSharedBytesPerCycle;
  c.feasible = c.c.num_values() <= kMaxAccumulatorsPerThread;
  int64_t groups = c.tm * c.tn;
  c.cycles = std::max(c.mma_cycles, c.smem_cycles) + double(c.instructions) / double(groups);
}

std::vector<std::pair<int64_t, int64_t>> factor_pairs(int64_t g) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t tm = 1; tm <= g; ++tm) {
    if (g % tm == 0) out.push_back({tm, g / tm});
  }
  return out;
}

}  // namespace

std::vector<MmaChoice> mma_choices(const target::cuda::Target& target, ScalarKind ab,
                                   ScalarKind acc, int64_t m, int64_t n, int64_t k,
                                   bool a_in_registers, bool b_in_registers, int64_t threads) {
  std::vector<MmaChoice> out;
  std::vector<int64_t> thread_counts =
      threads ? std::vector<int64_t>{threads} : std::vector<int64_t>{32, 64, 128, 256};
  for (const Atom& atom : target.mma_atoms(ab, acc)) {
    bool wg = atom.group_threads == 128;
    if (wg && (b_in_registers || atom.a_in_registers != a_in_registers)) continue;
    if (!wg && atom.a_in_registers != true) continue;
    for (int64_t t : thread_counts) {
      if (t % atom.group_threads != 0) continue;
      for (auto [tm, tn] : factor_pairs(t / atom.group_threads)) {
        if (m % (atom.m * tm) != 0 || n % (atom.n * tn) != 0 || k % atom.k != 0) continue;
        MmaChoice c = tile_mma(atom, m, n, k, tm, tn);
        cost(c, ab, a_in_registers, b_in_registers);
        out.push_back(std::move(c));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const MmaChoice& x, const MmaChoice& y) {
    if (x.feasible != y.feasible) return x.feasible;
    return x.cycles < y.cycles;
  });
  return out;
}

}  // namespace tessel::transforms
