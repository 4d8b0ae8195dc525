// Layout utilities for the synthesis passes.
#include "transforms/layout/layout_utils.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "support/diagnostics.h"

namespace tessel::transforms {

using layout::IntTuple;
using layout::Layout;
using layout::TVLayout;

std::vector<int64_t> tv_table(const layout::TVLayout& tv) {
  return layout_table(tv.layout());
}

bool vector_along(const std::vector<int64_t>& table, int64_t T, int64_t V, int64_t rows, int64_t w,
                  int d) {
  const int64_t step = d == 1 ? rows : 1;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t v = 0; v < V; v += w) {
      const int64_t base = table[size_t(t + T * v)];
      const int64_t coord = d == 1 ? base / rows : base % rows;
      if (coord % w != 0) return false;
      for (int64_t u = 1; u < w; ++u) {
        if (table[size_t(t + T * (v + u))] != base + u * step) return false;
      }
    }
  }
  return true;
}

bool same_tv(const layout::TVLayout& a, const layout::TVLayout& b) {
  if (a.layout() == b.layout() && a.tile_shape() == b.tile_shape()) return true;
  return a.num_threads() == b.num_threads() && a.num_values() == b.num_values() &&
         a.tile_shape() == b.tile_shape() && tv_table(a) == tv_table(b);
}

layout::TVLayout tile_atom(const layout::TVLayout& atom, int64_t m, int64_t n, int64_t tm,
                           int64_t tn) {
  TESSEL_ASSERT(atom.tile_shape().rank() == 2, "tile_atom takes a 2-D atom");
  int64_t ma = atom.tile_shape()[0].as_int(), na = atom.tile_shape()[1].as_int();
  if (tm < 1 || tn < 1 || m % (ma * tm) != 0 || n % (na * tn) != 0) {
    user_error(SourceLocation::unknown(), "an atom over (", ma, ",", na, ") tiled ", tm, "x", tn,
               " does not divide the tile (", m, ",", n, ")");
  }
  int64_t rm = m / (ma * tm), rn = n / (na * tn);
  // The atom's tile inside the big one: atom index r + ma*c -> r + m*c.
  Layout embed(IntTuple::tuple({ma, na}), IntTuple::tuple({1, m}));
  Layout inner = layout::composition(embed, atom.layout());
  auto mode = [](int64_t size, int64_t stride) {
    return Layout(IntTuple(size), IntTuple(size == 1 ? 0 : stride));
  };
  Layout threads = layout::make_layout({inner.mode(0), mode(tm, ma), mode(tn, m * na)});
  Layout values = layout::make_layout({inner.mode(1), mode(rm, ma * tm), mode(rn, m * na * tn)});
  // Drop the size-1 repeat modes so that the printed layout stays readable.
  auto tidy = [](const Layout& l) {
    std::vector<Layout> kept;
    for (const Layout& x : l.modes()) {
      if (x.size() != 1) kept.push_back(x);
    }
    if (kept.empty()) return Layout(IntTuple(1), IntTuple(0));
    return kept.size() == 1 ? kept[0] : layout::make_layout(kept);
  };
  return layout::TVLayout(layout::make_layout({tidy(threads), tidy(values)}),
                          IntTuple::tuple({m, n}));
}

layout::Layout single(int64_t size, int64_t stride) {
  return layout::Layout(layout::IntTuple(size), layout::IntTuple(size == 1 ? 0 : stride));
}

layout::Layout tidy(const std::vector<layout::Layout>& modes) {
  std::vector<layout::Layout> kept;
  for (const layout::Layout& m : modes) {
    if (m.size() != 1) kept.push_back(m);
  }
  if (kept.empty()) return layout::Layout(layout::IntTuple(1), layout::IntTuple(0));
  return kept.size() == 1 ? kept[0] : layout::make_layout(kept);
}

IntTuple tuple_of(const std::vector<int64_t>& shape) {
  std::vector<IntTuple> e;
  for (int64_t x : shape) e.emplace_back(x);
  return IntTuple(e);
}

// ---- Layout constructions ----------------------------------------------------------------------

TVLayout coalesced_layout(const std::vector<int64_t>& shape, int elem_bits, int64_t threads,
                          bool span_threads) {
  if (shape.empty() || shape.size() > 2) {
    user_error(SourceLocation::unknown(),
               "layout synthesis handles register tensors of rank 1 "
               "and 2, not ",
               shape.size());
  }
  int64_t rows = shape.size() == 2 ? shape[0] : 1, cols = shape.back();
  int64_t vec = std::max<int64_t>(1, 128 / elem_bits);
  while (vec > 1 && cols % vec != 0) vec /= 2;
  int64_t tc = std::min(threads, cols / vec);
  while (tc > 1 && (cols / vec) % tc != 0) --tc;
  int64_t tr = std::min(threads / tc, rows);
  while (tr > 1 && rows % tr != 0) --tr;
  int64_t rr = rows / tr, rc = cols / (vec * tc);
  // The threads a row leaves over hold copies (1024 threads and a [512] f16 row of 64 vectors: 16
  // copies); without them the tensor would span fewer threads than the block. Rows only: a 2-D
  // tile's copies would be summed twice by a reduce across threads (gemm_rowsum's [32,16] A tile
  // in 128 threads), which has no notion of copies.
  int64_t copies = span_threads && shape.size() == 1 && threads % tc == 0 ? threads / tc : 1;
  if (shape.size() == 1) {
    Layout l = layout::make_layout(
        {tidy({single(tc, vec), single(copies, 0)}), tidy({single(vec, 1), single(rc, vec * tc)})});
    return TVLayout(l, tuple_of(shape));
  }
  Layout l =
      layout::make_layout({tidy({single(tc, rows * vec), single(tr, 1), single(copies, 0)}),
                           tidy({single(vec, rows), single(rr, tr), single(rc, rows * vec * tc)})});
  return TVLayout(l, tuple_of(shape));
}

TVLayout project_layout(const TVLayout& tv, const std::vector<int64_t>& shape,
                        const std::vector<int64_t>& dims) {
  std::vector<IntTuple> strides;
  std::vector<int64_t> kept;
  int64_t stride = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), int64_t(d)) != dims.end()) {
      strides.emplace_back(int64_t(0));
    } else {
      strides.emplace_back(stride);
      stride *= shape[d];
      kept.push_back(shape[d]);
    }
  }
  Layout proj(tuple_of(shape), IntTuple(strides));
  Layout l = layout::composition(proj, tv.layout());
  // Values that land on the same element are one value of the result.
  Layout vals = layout::flatten(l.mode(1));
  std::vector<Layout> keep;
  for (const Layout& mode : vals.modes()) {
    if (mode.stride() != IntTuple(0) && mode.size() != 1) keep.push_back(mode);
  }
  Layout threads = layout::coalesce(l.mode(0));
  return TVLayout(layout::make_layout({threads, tidy(keep)}),
                  kept.empty() ? IntTuple::tuple({1}) : tuple_of(kept));
}

namespace {

// A leaf mode of a TV layout over a tile: `extent` steps of `step` along tile dimension `dim`
// (dim -1: stride 0, a broadcast).
struct LeafMode {
  bool thread;
  int64_t extent, step;
  int dim;
};

void collect_leaves(const IntTuple& shape, const IntTuple& stride, bool thread,
                    std::vector<LeafMode>& out) {
  if (shape.is_leaf()) {
    out.push_back({thread, shape.as_int(), stride.as_int(), -1});
    return;
  }
  for (int i = 0; i < shape.rank(); ++i) collect_leaves(shape[i], stride[i], thread, out);
}

// The same nesting with leaf i's extent and stride from `leaves` (extent) and `strides`.
std::pair<IntTuple, IntTuple> rebuild(const IntTuple& shape, const std::vector<LeafMode>& leaves,
                                      const std::vector<int64_t>& strides, size_t& next) {
  if (shape.is_leaf()) {
    const size_t i = next++;
    return {IntTuple(leaves[i].extent), IntTuple(strides[i])};
  }
  std::vector<IntTuple> sh, st;
  for (int i = 0; i < shape.rank(); ++i) {
    auto [a, b] = rebuild(shape[i], leaves, strides, next);
    sh.push_back(a);
    st.push_back(b);
  }
  return {IntTuple(sh), IntTuple(st)};
}

}  // namespace

std::optional<TVLayout> slice_layout(const TVLayout& tv, const std::vector<int64_t>& src_shape,
                                     const std::vector<int64_t>& offsets,
                                     const std::vector<int64_t>& shape) {
  const size_t rank = src_shape.size();
  if (offsets.size() != rank || shape.size() != rank || !tv.layout().shape().is_constant())
    return std::nullopt;
  // The tile index is colexicographic: dimension d's coordinate steps by prefix[d].
  std::vector<int64_t> prefix(rank, 1), result_prefix(rank, 1);
  for (size_t d = 1; d < rank; ++d) {
    prefix[d] = prefix[d - 1] * src_shape[d - 1];
    result_prefix[d] = result_prefix[d - 1] * shape[d - 1];
  }
  std::vector<LeafMode> leaves;
  const Layout& l = tv.layout();
  collect_leaves(l.shape()[0], l.stride()[0], true, leaves);
  const size_t thread_leaves = leaves.size();
  collect_leaves(l.shape()[1], l.stride()[1], false, leaves);
  std::vector<int64_t> reach(rank, 0);  // the largest coordinate the modes of a dimension reach
  for (LeafMode& m : leaves) {
    if (m.step == 0 || m.extent == 1) continue;
    for (size_t d = rank; d-- > 0;) {
      if (m.step % prefix[d] != 0) continue;
      const int64_t step = m.step / prefix[d];
      if (step >= src_shape[d]) return std::nullopt;
      m.dim = static_cast<int>(d);
      m.step = step;
      reach[d] += (m.extent - 1) * step;
      break;
    }
    if (m.dim < 0) return std::nullopt;
  }
  for (size_t d = 0; d < rank; ++d) {
    if (reach[d] >= src_shape[d]) return std::nullopt;  // modes that wrap into another dimension
    if (offsets[d] == 0 && shape[d] == src_shape[d]) continue;
    LeafMode* outer = nullptr;
    for (LeafMode& m : leaves) {
      if (m.dim == static_cast<int>(d) && m.extent > 1 && (!outer || m.step > outer->step))
        outer = &m;
    }
    if (!outer || outer->thread) return std::nullopt;
    // The other modes of d stay inside one step of the outer one; the window is whole steps.
    if (reach[d] - (outer->extent - 1) * outer->step >= outer->step) return std::nullopt;
    if (offsets[d] % outer->step != 0 || shape[d] % outer->step != 0 ||
        offsets[d] + shape[d] > outer->extent * outer->step) {
      return std::nullopt;
    }
    outer->extent = shape[d] / outer->step;
  }
  std::vector<int64_t> strides;
  for (const LeafMode& m : leaves) strides.push_back(m.dim < 0 ? 0 : m.step * result_prefix[m.dim]);
  size_t next = 0;
  auto [ts, tt] = rebuild(l.shape()[0], leaves, strides, next);
  TESSEL_ASSERT(next == thread_leaves, "slice_layout: thread leaves");
  auto [vs, vt] = rebuild(l.shape()[1], leaves, strides, next);
  return TVLayout(Layout(IntTuple::tuple({ts, vs}), IntTuple::tuple({tt, vt})), tuple_of(shape));
}

}  // namespace tessel::transforms
