// The thread-level interpreter's atom executors: copies (ldmatrix, stmatrix, ld/st.shared vectors)
// and mma (mma.sync, wgmma) executed lane by lane through the atoms' fragment layouts.
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "interp/element_ops.h"
#include "interp/numerics.h"
#include "interp/thread_interpreter_internal.h"
#include "layout/parse.h"
#include "layout/table.h"
#include "support/diagnostics.h"
#include "target/cuda/atoms.h"
#include "target/cuda/target.h"

namespace tessel::interp::detail {

void ThreadRun::copy(const Operation& op) {
  const RV& src = get(op.operand(0));
  if (op.num_results() == 1) {
    const Value* dst = op.result();
    std::vector<int64_t> shape = dst->type().static_shape();
    if (dst->type().space() == MemorySpace::shared && src.kind == RV::global) {
      RV r;
      r.kind = RV::shared;
      r.sh = shared_view(dst, nullptr);
      for (int64_t i = 0; i < product(shape); ++i)
        (*r.sh.mem)[size_t(r.sh.table[size_t(i)])] = load(op, src.g, coord_of(i, shape));
      env_[dst] = r;
      return;
    }
    if (dst->type().space() == MemorySpace::reg) {
      Regs regs = new_regs(dst, op);
      if (src.kind == RV::shared) {
        // `%r = copy %s`: executed by its atom like `copy %s, %r` (ldmatrix lane by lane).
        load_shared(
            op, op.has_attr("atom") ? op.str_attr("atom") : "", src.sh, regs,
            [](int64_t i) { return i; }, ir::bit_width(op.operand(0)->type().element()));
      } else {
        fill_regs(op, regs, src, shape);
      }
      set_regs(dst, regs);
      return;
    }
    unsupported(op);
  }
  const RV& dst = get(op.operand(1));
  if (src.kind == RV::reg && dst.kind == RV::global) {
    const Regs& r = src.r;
    for (int64_t t = 0; t < r.T; ++t)
      for (int64_t v = 0; v < r.V; ++v)
        store(op, dst.g, coord_of(r.elem(t, v), r.shape), r.at(t, v));
    return;
  }
  if (dst.kind == RV::reg && src.kind == RV::shared) {
    load_shared(
        op, op.has_attr("atom") ? op.str_attr("atom") : "", src.sh, dst.r,
        [](int64_t i) { return i; }, ir::bit_width(op.operand(0)->type().element()));
    return;
  }
  if (dst.kind == RV::reg) {
    fill_regs(op, dst.r, src, dst.r.shape);
    return;
  }
  if (src.kind == RV::reg && dst.kind == RV::shared) {
    store_shared(op, op.has_attr("atom") ? op.str_attr("atom") : "", dst.sh, src.r,
                 ir::bit_width(op.operand(0)->type().element()));
    return;
  }
  unsupported(op);
}

// Each thread loads the elements of its own values.
// Loads a register fragment from a shared tile by executing the chosen instruction lane by lane:
// ldmatrix.x{N}[.trans]: lanes 8j..8j+7 give the 16-byte row addresses of matrix j (taken, as
// the emitter would, from the element the fragment puts first in that row), and lane l receives
// the two elements at row (l/4) + 2(l%4) (.trans: rows 2(l%4)+h, element l/4) — so a layout
// that does not keep each row contiguous delivers the wrong values; ld.shared.bX: each thread
// reads X bits from the offset of the first value of each vector. `shared_index` maps the
// fragment's tile index to the shared view's. Other atoms (and none) load element by element.
void ThreadRun::load_shared(const Operation& op, const std::string& atom, const Shared& sh,
                            const Regs& regs, const std::function<int64_t(int64_t)>& shared_index,
                            int bits) {
  auto offset = [&](int64_t t, int64_t v) {
    return sh.table[size_t(shared_index(regs.elem(t, v)))];
  };
  auto mem = [&](int64_t off) {
    if (off < 0 || off >= int64_t(sh.mem->size()))
      user_error(op.loc(), op.name(), ": ", atom, " reads shared offset ", off,
                 " outside the tile");
    return (*sh.mem)[size_t(off)];
  };
  int count = 0;
  bool trans = atom.find(".trans") != std::string::npos;
  // Packed sub-byte elements (int4) travel as 16-bit units of 16/bits elements: lane l's unit
  // is its 16/bits consecutive values, read from consecutive offsets of the row.
  const int64_t p = bits < 16 && 16 % bits == 0 ? 16 / bits : 1;
  if (p > 1 && !trans && std::sscanf(atom.c_str(), "ldmatrix.x%d", &count) == 1 &&
      regs.T % 32 == 0 && regs.V % (2 * count * p) == 0) {
    for (int64_t w = 0; w < regs.T / 32; ++w)
      for (int64_t c = 0; c < regs.V / (2 * count * p); ++c)
        for (int j = 0; j < count; ++j) {
          int64_t unit0 = c * 2 * count + 2 * j;
          int64_t row[8];
          for (int r = 0; r < 8; ++r) row[r] = offset(32 * w + 4 * r, unit0 * p);
          for (int l = 0; l < 32; ++l)
            for (int h = 0; h < 2; ++h)
              for (int64_t e = 0; e < p; ++e)
                regs.at(32 * w + l, (unit0 + h) * p + e) =
                    mem(row[l / 4] + (2 * (l % 4) + h) * p + e);
        }
    return;
  }
  if (p == 1 && std::sscanf(atom.c_str(), "ldmatrix.x%d", &count) == 1 && regs.T % 32 == 0 &&
      regs.V % (2 * count) == 0) {
    for (int64_t w = 0; w < regs.T / 32; ++w)
      for (int64_t c = 0; c < regs.V / (2 * count); ++c)
        for (int j = 0; j < count; ++j) {
          int64_t row[8];
          for (int r = 0; r < 8; ++r)
            row[r] = trans ? offset(32 * w + r / 2, c * 2 * count + 2 * j + r % 2)
                           : offset(32 * w + 4 * r, c * 2 * count + 2 * j);
          for (int l = 0; l < 32; ++l)
            for (int h = 0; h < 2; ++h)
              regs.at(32 * w + l, c * 2 * count + 2 * j + h) =
                  trans ? mem(row[2 * (l % 4) + h] + l / 4) : mem(row[l / 4] + 2 * (l % 4) + h);
        }
    return;
  }
  int vbits = 0;
  if (std::sscanf(atom.c_str(), "ld.shared.b%d", &vbits) == 1 && vbits >= bits) {
    int64_t w = vbits / bits;
    if (regs.V % w == 0) {
      for (int64_t t = 0; t < regs.T; ++t)
        for (int64_t v = 0; v < regs.V; v += w) {
          int64_t base = offset(t, v);
          for (int64_t u = 0; u < w; ++u) regs.at(t, v + u) = mem(base + u);
        }
      return;
    }
  }
  for (int64_t t = 0; t < regs.T; ++t)
    for (int64_t v = 0; v < regs.V; ++v) regs.at(t, v) = mem(offset(t, v));
}

// Stores a register tensor into a shared tile by executing the chosen instruction: stmatrix lane
// by lane (the mirror of ldmatrix), st.shared.bX as whole vectors, else element by element.
void ThreadRun::store_shared(const Operation& op, const std::string& atom, const Shared& sh,
                             const Regs& regs, int bits) {
  auto offset = [&](int64_t t, int64_t v) { return sh.table[size_t(regs.elem(t, v))]; };
  auto put = [&](int64_t off, double x) {
    if (off < 0 || off >= int64_t(sh.mem->size()))
      user_error(op.loc(), op.name(), ": ", atom, " writes shared offset ", off,
                 " outside the tile");
    (*sh.mem)[size_t(off)] = x;
  };
  int count = 0;
  bool trans = atom.find(".trans") != std::string::npos;
  if (std::sscanf(atom.c_str(), "stmatrix.x%d", &count) == 1 && regs.T % 32 == 0 &&
      regs.V % (2 * count) == 0) {
    for (int64_t w = 0; w < regs.T / 32; ++w)
      for (int64_t c = 0; c < regs.V / (2 * count); ++c)
        for (int j = 0; j < count; ++j) {
          int64_t row[8];
          for (int r = 0; r < 8; ++r)
            row[r] = trans ? offset(32 * w + r / 2, c * 2 * count + 2 * j + r % 2)
                           : offset(32 * w + 4 * r, c * 2 * count + 2 * j);
          for (int l = 0; l < 32; ++l)
            for (int h = 0; h < 2; ++h)
              put(trans ? row[2 * (l % 4) + h] + l / 4 : row[l / 4] + 2 * (l % 4) + h,
                  regs.at(32 * w + l, c * 2 * count + 2 * j + h));
        }
    return;
  }
  int vbits = 0;
  if (std::sscanf(atom.c_str(), "st.shared.b%d", &vbits) == 1 && vbits >= bits &&
      regs.V % (vbits / bits) == 0) {
    int64_t w = vbits / bits;
    for (int64_t t = 0; t < regs.T; ++t)
      for (int64_t v = 0; v < regs.V; v += w) {
        int64_t base = offset(t, v);
        for (int64_t u = 0; u < w; ++u) put(base + u, regs.at(t, v + u));
      }
    return;
  }
  for (int64_t t = 0; t < regs.T; ++t)
    for (int64_t v = 0; v < regs.V; ++v) put(offset(t, v), regs.at(t, v));
}

void ThreadRun::fill_regs(const Operation& op, const Regs& regs, const RV& src,
                          const std::vector<int64_t>& shape) {
  for (int64_t t = 0; t < regs.T; ++t) {
    for (int64_t v = 0; v < regs.V; ++v) {
      int64_t e = regs.elem(t, v);
      if (src.kind == RV::global) {
        regs.at(t, v) = load(op, src.g, coord_of(e, shape));
      } else if (src.kind == RV::shared) {
        regs.at(t, v) = (*src.sh.mem)[size_t(src.sh.table[size_t(e)])];
      } else {
        unsupported(op);
      }
    }
  }
}

void ThreadRun::mma(const Operation& op) {
  if (!op.has_attr("atom") || !op.has_attr("tiling"))
    user_error(op.loc(), "mma: no atom chosen (run synthesize-layouts first)");
  const std::string& name = op.str_attr("atom");
  const ir::Type& at = op.operand(0)->type();
  const ir::Type& ct = op.operand(2)->type();
  std::optional<target::cuda::Atom> atom;
  for (const target::cuda::Atom& a :
       target::cuda::Target::sm90a().mma_atoms(at.element(), ct.element()))
    if (a.name == name) atom = a;
  if (!atom) user_error(op.loc(), "mma: unknown atom ", name);
  int64_t tm = op.ints_attr("tiling")[0], tn = op.ints_attr("tiling")[1];
  int64_t M = at.static_shape()[0], K = at.static_shape()[1];
  int64_t N = op.operand(1)->type().static_shape()[1];
  int64_t G = atom->group_threads;
  int64_t rm = M / (atom->m * tm), rn = N / (atom->n * tn), rk = K / atom->k;
  // The operands as the threads hold them.
  struct Operand {
    bool whole = false;
    bool kn = false;  // a register B held over its IR shape [K,N]
    const Shared* sh = nullptr;
    Regs regs;
    std::vector<std::unordered_map<int64_t, int64_t>> slot;
    const Value* v = nullptr;
  };
  auto operand = [&](int i, const char* frag_attr, std::vector<int64_t> frag_shape) {
    Operand o;
    o.v = op.operand(i);
    const RV& x = get(o.v);
    if (x.kind == RV::reg) {
      o.regs = x.r;
      o.kn = i == 1;
    } else if (op.has_attr(frag_attr)) {
      // mma.sync from shared memory: each thread loads its fragment (what ldmatrix delivers).
      o.regs.shape = frag_shape;
      layout::Layout l = layout::parse_layout(op.str_attr(frag_attr));
      o.regs.table = layout::layout_table(l);
      o.regs.T = l.mode(0).size();
      o.regs.V = l.mode(1).size();
      o.regs.data = std::make_shared<std::vector<double>>(size_t(o.regs.T * o.regs.V));
      const char* load_attr = i == 0 ? "a_load" : "b_load";
      std::vector<int64_t> view_shape = x.sh.shape;
      load_shared(
          op, op.has_attr(load_attr) ? op.str_attr(load_attr) : "", x.sh, o.regs,
          [&, i](int64_t e) {
            std::vector<int64_t> c = coord_of(e, frag_shape);
            // B fragments are over (N,K); the operand is [K,N].
            std::vector<int64_t> oc = i == 1 ? std::vector<int64_t>{c[1], c[0]} : c;
            return colex(oc, view_shape);
          },
          ir::bit_width(at.element()));
    } else {
      o.whole = true;
      o.sh = &x.sh;
    }
    if (!o.whole) o.slot = slots(o.regs);
    return o;
  };
  Operand A = operand(0, "a_fragment", {M, K});
  Operand B = operand(1, "b_fragment", {N, K});
  Operand C = operand(2, "", {M, N});
  Regs D = new_regs(op.result(), op);
  auto dslot = slots(D);
  // D starts as C (held the same way when the layouts agree; else element by element).
  for (int64_t t = 0; t < D.T; ++t)
    for (int64_t v = 0; v < D.V; ++v) D.at(t, v) = held(op, C.v, C.regs, C.slot, t, D.elem(t, v));
  auto read = [&](Operand& o, int64_t t, int64_t r, int64_t c, int64_t rows, bool is_b) {
    if (o.whole) {
      std::vector<int64_t> oc = is_b ? std::vector<int64_t>{c, r} : std::vector<int64_t>{r, c};
      return (*o.sh->mem)[size_t(o.sh->table[size_t(colex(oc, o.sh->shape))])];
    }
    if (o.kn) return held(op, o.v, o.regs, o.slot, t, c + K * r);
    return held(op, o.v, o.regs, o.slot, t, r + rows * c);
  };
  const layout::TVLayout& fa = *atom->a;
  const layout::TVLayout& fb = *atom->b;
  const layout::TVLayout& fc = *atom->c;
  int64_t ma = atom->m, na = atom->n, ka = atom->k;
  ir::ScalarKind in_kind = at.element(), acc_kind = ct.element();
  std::vector<Element> ta(size_t(ma * ka)), tb(size_t(na * ka));
  std::vector<double> tc(size_t(ma * na));
  for (int64_t j = 0; j < tn; ++j)
    for (int64_t i = 0; i < tm; ++i)
      for (int64_t b = 0; b < rn; ++b)
        for (int64_t a = 0; a < rm; ++a) {
          int64_t r0 = ma * (i + tm * a), c0 = na * (j + tn * b);
          int64_t t0 = G * (i + tm * j);
          // C tile of this instance, gathered from the lanes through the atom's C fragment.
          for (int64_t l = 0; l < fc.num_threads(); ++l)
            for (int64_t v = 0; v < fc.num_values(); ++v) {
              int64_t e = fc.index(l, v);
              tc[size_t(e)] =
                  held(op, op.result(), D, dslot, t0 + l, (r0 + e % ma) + M * (c0 + e / ma));
            }
          for (int64_t kk = 0; kk < rk; ++kk) {
            int64_t k0 = ka * kk;
            for (int64_t l = 0; l < fa.num_threads(); ++l)
              for (int64_t v = 0; v < fa.num_values(); ++v) {
                int64_t e = fa.index(l, v);
                ta[size_t(e)] =
                    element_of_double(in_kind, read(A, t0 + l, r0 + e % ma, k0 + e / ma, M, false));
              }
            for (int64_t l = 0; l < fb.num_threads(); ++l)
              for (int64_t v = 0; v < fb.num_values(); ++v) {
                int64_t e = fb.index(l, v);
                tb[size_t(e)] =
                    element_of_double(in_kind, read(B, t0 + l, c0 + e % na, k0 + e / na, N, true));
              }
            for (int64_t c = 0; c < na; ++c)
              for (int64_t r = 0; r < ma; ++r) {
                Element acc = element_of_double(acc_kind, tc[size_t(r + ma * c)]);
                for (int64_t q = 0; q < ka; ++q)
                  acc = multiply_add(in_kind, acc_kind, acc, ta[size_t(r + ma * q)],
                                     tb[size_t(c + na * q)]);
                tc[size_t(r + ma * c)] = element_as_double(acc_kind, acc);
              }
            ++stats_.mma_atoms;
          }
          // Scatter D back through the C fragment.
          for (int64_t l = 0; l < fc.num_threads(); ++l)
            for (int64_t v = 0; v < fc.num_values(); ++v) {
              int64_t e = fc.index(l, v);
              int64_t elem = (r0 + e % ma) + M * (c0 + e / ma);
              auto it = dslot[size_t(t0 + l)].find(elem);
              if (it == dslot[size_t(t0 + l)].end()) missing(op, op.result(), D, t0 + l, elem);
              D.at(t0 + l, it->second) = tc[size_t(e)];
            }
        }
  set_regs(op.result(), D);
}

}  // namespace tessel::interp::detail
