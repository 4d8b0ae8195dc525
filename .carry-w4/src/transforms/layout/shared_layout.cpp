// Shared-memory layout synthesis: alignment unification, the canonical TMA/wgmma layouts, and the
// swizzle search over the bank model.
#include "transforms/layout/shared_layout.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "layout/parse.h"
#include "support/diagnostics.h"
#include "transforms/layout/layout_utils.h"

namespace tessel::transforms {

using layout::ComposedLayout;
using layout::IntTuple;
using layout::Layout;
using layout::Swizzle;
using target::cuda::BankCount;
using target::cuda::WarpRequest;

namespace {

const char* kind_name(AccessKind k) {
  switch (k) {
    case AccessKind::threads:
      return "threads";
    case AccessKind::tma:
      return "TMA";
    case AccessKind::wgmma:
      return "wgmma";
  }
  return "?";
}

int log2_exact(int64_t v) {
  int b = 0;
  while ((int64_t(1) << b) < v) ++b;
  return (int64_t(1) << b) == v ? b : -1;
}

// Thread 0's first vector as a layout of tile-index steps (relative to its first element): modes
// found greedily, each the next index not yet reached repeated as often as the pattern holds.
// Evenly spaced vectors give (vec):(step); a packed ldmatrix row gives several modes.
std::optional<Layout> vector_layout(const SharedAccess& a) {
  int64_t vec = a.vector_elems;
  if (a.values < vec || a.threads == 0) return std::nullopt;
  std::vector<int64_t> idx(static_cast<size_t>(vec));
  for (int64_t u = 0; u < vec; ++u)
    idx[size_t(u)] = a.table[static_cast<size_t>(a.threads * u)] - a.table[0];
  if (vec == 1) return Layout(IntTuple(1), IntTuple(0));
  std::vector<IntTuple> shape, stride;
  int64_t len = 1;
  while (len < vec) {
    int64_t step = idx[size_t(len)];
    if (step <= 0) return std::nullopt;
    int64_t c = 1;
    auto block_ok = [&](int64_t b) {
      for (int64_t u = 0; u < len; ++u)
        if (idx[size_t(len * b + u)] != idx[size_t(u)] + b * step) return false;
      return true;
    };
    while (len * (c + 1) <= vec && block_ok(c)) ++c;
    if (c == 1 || vec % (len * c) != 0) return std::nullopt;
    shape.emplace_back(c);
    stride.emplace_back(step);
    len *= c;
  }
  if (shape.size() == 1) return Layout(shape[0], stride[0]);
  return Layout(IntTuple(std::move(shape)), IntTuple(std::move(stride)));
}

// The candidate layout that puts `a`'s vectors first and the rest of the tile after them in
// row-major order; nullopt when the vector has no complement in the tile.
std::optional<Layout> candidate_from(const IntTuple& tile_shape, const SharedAccess& a) {
  try {
    Layout rm(tile_shape, layout::compact_row_major(tile_shape));
    std::optional<Layout> v = vector_layout(a);
    if (!v) return std::nullopt;
    Layout vec = *v;
    Layout vrm = layout::composition(rm, vec);
    layout::Extent size = layout::product(tile_shape);
    Layout inv = layout::make_layout({vrm, layout::complement(vrm, size)});
    if (inv.size() != size.constant()) return std::nullopt;
    Layout m = layout::composition(layout::left_inverse(inv), rm);
    return layout::coalesce(m, layout::repeat_like(tile_shape, 1));
  } catch (const UserError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<SharedAccess> match_ldmatrix(const std::vector<int64_t>& table, int64_t T, int64_t V,
                                           int64_t rows, int64_t cols, int count, bool trans, int d,
                                           int elem_bits) {
  if (elem_bits > 16 || 16 % elem_bits != 0) return std::nullopt;
  const int64_t p = 16 / elem_bits;  // elements per 16-bit unit
  if (p > 1 && trans) return std::nullopt;
  if (T % 32 != 0 || V % (2 * count * p) != 0) return std::nullopt;
  int64_t step = d == 1 ? rows : 1;
  int64_t extent = d == 1 ? cols : rows;
  int64_t chunks = V / (2 * count * p);
  SharedAccess a;
  a.kind = AccessKind::threads;
  a.threads = T;
  a.values = chunks * 8 * p;
  a.vector_elems = static_cast<int>(8 * p);
  a.active_lanes = 8 * count;
  a.table.assign(size_t(T * a.values), 0);
  auto at = [&](int64_t t, int64_t v) { return table[size_t(t + T * v)]; };
  for (int64_t w = 0; w < T / 32; ++w) {
    for (int64_t c = 0; c < chunks; ++c) {
      for (int j = 0; j < count; ++j) {
        int64_t unit0 = c * 2 * count + 2 * j;  // the lane's first unit from matrix j
        // row[r][u]: tile index of element u of row r of matrix j.
        std::vector<std::vector<int64_t>> row(8, std::vector<int64_t>(size_t(8 * p)));
        if (p == 1) {
          for (int r = 0; r < 8; ++r) {
            int64_t base = trans ? at(32 * w + r / 2, unit0 + r % 2) : at(32 * w + 4 * r, unit0);
            int64_t coord = d == 1 ? base / rows : base % rows;
            if (coord % 8 != 0 || coord + 8 > extent) return std::nullopt;
            for (int u = 0; u < 8; ++u) row[size_t(r)][size_t(u)] = base + u * step;
          }
          for (int l = 0; l < 32; ++l) {
            int g = l / 4, q = l % 4;
            for (int h = 0; h < 2; ++h) {
              int64_t expect =
                  trans ? row[size_t(2 * q + h)][0] + g * step : row[size_t(g)][size_t(2 * q + h)];
              if (at(32 * w + l, unit0 + h) != expect) return std::nullopt;
            }
          }
        } else {
          // The row is whatever the lanes hold: unit k of row r is lane 4r + k/2's unit k%2.
          for (int r = 0; r < 8; ++r)
            for (int64_t u = 0; u < 8 * p; ++u) {
              int64_t k = u / p;
              row[size_t(r)][size_t(u)] = at(32 * w + 4 * r + k / 2, (unit0 + k % 2) * p + u % p);
            }
        }
        for (int l = 0; l < 32; ++l) {
          int lane = l % (8 * count);
          if (lane / 8 != j) continue;
          for (int64_t u = 0; u < 8 * p; ++u) {
            // lanes past 8*count repeat the addresses of the first ones
            for (int64_t rep = l; rep < 32; rep += 8 * count)
              a.table[size_t(32 * w + rep + T * (c * 8 * p + u))] =
                  row[size_t(lane % 8)][size_t(u)];
          }
        }
      }
    }
  }
  return a;
}

SharedAccess SharedAccess::from_tv(std::string who, const layout::TVLayout& tv, int vector_elems,
                                   int active_lanes) {
  SharedAccess a;
  a.who = std::move(who);
  a.kind = AccessKind::threads;
  a.table = tv_table(tv);
  a.threads = tv.num_threads();
  a.values = tv.num_values();
  a.vector_elems = vector_elems;
  a.active_lanes = active_lanes;
  return a;
}

SharedAccess SharedAccess::bulk(std::string who, AccessKind kind) {
  SharedAccess a;
  a.who = std::move(who);
  a.kind = kind;
  return a;
}

std::string check_alignment(const ComposedLayout& m, const SharedAccess& a) {
  if (a.kind != AccessKind::threads) return {};
  std::vector<int64_t> mt = layout_table(m);
  const std::vector<int64_t>& tvt = a.table;
  int64_t threads = a.threads, values = a.values, vec = a.vector_elems;
  if (values % vec != 0) {
    return "each thread holds " + std::to_string(values) + " values, not a multiple of its " +
           std::to_string(vec) + "-element vectors";
  }
  for (int64_t t = 0; t < threads; ++t) {
    for (int64_t j = 0; j < values / vec; ++j) {
      int64_t base = mt[static_cast<size_t>(tvt[static_cast<size_t>(t + threads * j * vec)])];
      if (base % vec != 0) {
        return "thread " + std::to_string(t) + "'s vector " + std::to_string(j) +
               " starts at offset " + std::to_string(base) + ", not a multiple of " +
               std::to_string(vec);
      }
      for (int64_t u = 1; u < vec; ++u) {
        int64_t off =
            mt[static_cast<size_t>(tvt[static_cast<size_t>(t + threads * (j * vec + u))])];
        if (off != base + u) {
          return "thread " + std::to_string(t) + "'s vector " + std::to_string(j) +
                 " is not contiguous (element " + std::to_string(u) + " at offset " +
                 std::to_string(off) + ", expected " + std::to_string(base + u) + ")";
        }
      }
    }
  }
  return {};
}

BankCount count_conflicts(const ComposedLayout& m, const SharedAccess& a, int elem_bits) {
  BankCount total;
  if (a.kind != AccessKind::threads) return total;
  std::vector<int64_t> mt = layout_table(m);
  const std::vector<int64_t>& tvt = a.table;
  int64_t threads = a.threads, vec = a.vector_elems;
  int64_t chunks = a.values / vec;
  int bytes = static_cast<int>(vec * elem_bits / 8);
  if (bytes == 0) bytes = 1;  // sub-byte scalars: the byte that holds them
  for (int64_t w = 0; w * 32 < threads; ++w) {
    for (int64_t j = 0; j < chunks; ++j) {
      WarpRequest r;
      r.bytes = bytes;
      for (int64_t l = 0; l < 32 && w * 32 + l < threads; ++l) {
        if (l >= a.active_lanes) {
          r.address.push_back(-1);
          continue;
        }
        int64_t off =
            mt[static_cast<size_t>(tvt[static_cast<size_t>(w * 32 + l + threads * j * vec)])];
        r.address.push_back(off * elem_bits / 8 / bytes * bytes);
      }
      total += target::cuda::count_wavefronts(r);
    }
  }
  return total;
}

Layout unify_alignment(const IntTuple& tile_shape, const std::vector<SharedAccess>& accesses,
                       const std::string& tensor) {
  std::vector<const SharedAccess*> vectored;
  for (const SharedAccess& a : accesses) {
    if (a.kind == AccessKind::threads && a.vector_elems > 1) vectored.push_back(&a);
  }
  std::stable_sort(vectored.begin(), vectored.end(),
                   [](const SharedAccess* x, const SharedAccess* y) {
                     return x->vector_elems > y->vector_elems;
                   });
  Layout row_major(tile_shape, layout::compact_row_major(tile_shape));
  if (vectored.empty()) return row_major;
  // The first failure seen: (the access whose layout was tried, the access it broke, why).
  std::optional<std::tuple<const SharedAccess*, const SharedAccess*, std::string>> failure;
  for (const SharedAccess* primary : vectored) {
    std::optional<Layout> m = candidate_from(tile_shape, *primary);
    if (!m) continue;
    ComposedLayout cm(Swizzle(), 0, *m);
    bool ok = true;
    for (const SharedAccess& other : accesses) {
      std::string problem = check_alignment(cm, other);
      if (!problem.empty()) {
        if (!failure) failure.emplace(primary, &other, problem);
        ok = false;
        break;
      }
    }
    if (ok) return *m;
  }
  if (failure) {
    const auto& [p, o, why] = *failure;
    user_error(SourceLocation::unknown(), "shared tensor ", tensor,
               ": no layout gives both accesses contiguous aligned vectors: ", p->who, " needs ",
               p->vector_elems, "-element vectors (tile steps ",
               layout::to_string(*vector_layout(*p)), ") but under the layout that gives them (",
               layout::to_string(*candidate_from(tile_shape, *p)), ") ", o->who, " breaks: ", why);
  }
  user_error(SourceLocation::unknown(), "shared tensor ", tensor,
             ": no layout gives the vectors of ", vectored.front()->who,
             " a place in the tile (their elements have no complement)");
}

ComposedLayout canonical_tma_layout(int64_t rows, int64_t cols, int elem_bits) {
  int64_t row_bits = cols * elem_bits;
  if (rows % 8 != 0 || row_bits % 128 != 0) {
    user_error(SourceLocation::unknown(), "no canonical TMA/wgmma layout for a ", rows, "x", cols,
               " tile of ", elem_bits,
               "-bit elements: rows must be a multiple of 8 and a row a "
               "multiple of 16 bytes");
  }
  int64_t row_bytes = row_bits / 8;
  int span = row_bytes % 128 == 0 ? 128 : row_bytes % 64 == 0 ? 64 : row_bytes % 32 == 0 ? 32 : 0;
  int64_t atom_cols = (span ? span : 16) * 8 / elem_bits;
  Layout l(IntTuple::tuple(
               {IntTuple::tuple({8, rows / 8}), IntTuple::tuple({atom_cols, cols / atom_cols})}),
           IntTuple::tuple({IntTuple::tuple({atom_cols, 8 * atom_cols}),
                            IntTuple::tuple({1, rows * atom_cols})}));
  l = layout::coalesce(l, IntTuple::tuple({1, 1}));
  Swizzle sw;
  if (span) sw = Swizzle(log2_exact(span / 16), log2_exact(128 / elem_bits), 3);
  return ComposedLayout(sw, 0, l);
}

SharedLayoutChoice choose_swizzle(const Layout& base, const std::vector<SharedAccess>& accesses,
                                  int elem_bits) {
  auto score = [&](const ComposedLayout& m,
                   std::vector<AccessReport>* out) -> std::optional<int64_t> {
    int64_t total = 0;
    for (const SharedAccess& a : accesses) {
      if (!check_alignment(m, a).empty()) return std::nullopt;
      BankCount b = count_conflicts(m, a, elem_bits);
      total += b.wavefronts;
      if (out) out->push_back({a.who, b});
    }
    return total;
  };
  ComposedLayout best(Swizzle(), 0, base);
  std::optional<int64_t> best_score = score(best, nullptr);
  TESSEL_ASSERT(best_score.has_value(), "the unified layout must serve every access");
  int64_t unswizzled = *best_score;
  int64_t size = base.size();
  int tried = 0;
  for (int b = 1; b <= 3; ++b) {
    for (int s = b; s <= 7; ++s) {
      for (int m = 5; m >= 0; --m) {
        if (b + m + s >= 62 || size % (int64_t(1) << (b + m + s)) != 0) continue;
        ComposedLayout cand(Swizzle(b, m, s), 0, base);
        ++tried;
        std::optional<int64_t> sc = score(cand, nullptr);
        if (sc && *sc < *best_score) {
          best = cand;
          best_score = sc;
        }
      }
    }
  }
  SharedLayoutChoice out;
  out.layout = best;
  score(best, &out.accesses);
  std::ostringstream why;
  why << "swizzle search over " << tried << " candidates: " << best.swizzle().str() << " takes "
      << *best_score << " wavefronts, unswizzled " << unswizzled;
  out.reason = why.str();
  return out;
}

SharedLayoutChoice synthesize_shared_layout(const IntTuple& tile_shape, int elem_bits,
                                            const std::vector<SharedAccess>& accesses,
                                            const std::string& tensor) {
  const SharedAccess* bulk = nullptr;
  for (const SharedAccess& a : accesses) {
    if (a.kind != AccessKind::threads && !bulk) bulk = &a;
  }
  if (!bulk) {
    Layout base = unify_alignment(tile_shape, accesses, tensor);
    return choose_swizzle(base, accesses, elem_bits);
  }
  if (tile_shape.rank() != 2) {
    user_error(SourceLocation::unknown(), "shared tensor ", tensor, ": ", bulk->who,
               " needs a 2-D tile, not ", tile_shape.str());
  }
  SharedLayoutChoice out;
  out.layout = canonical_tma_layout(tile_shape[0].as_int(), tile_shape[1].as_int(), elem_bits);
  for (const SharedAccess& a : accesses) {
    std::string problem = check_alignment(out.layout, a);
    if (!problem.empty()) {
      user_error(SourceLocation::unknown(), "shared tensor ", tensor, ": ", a.who,
                 " cannot use the canonical layout ", out.layout.str(), " that ", bulk->who,
                 " requires: ", problem);
    }
    out.accesses.push_back({a.who, count_conflicts(out.layout, a, elem_bits)});
  }
  out.reason =
      std::string("canonical layout required by ") + kind_name(bulk->kind) + " (" + bulk->who + ")";
  return out;
}

}  // namespace tessel::transforms
