// Layout utilities for the synthesis passes.
#include "transforms/layout/layout_utils.h"

#include "support/diagnostics.h"

namespace tessel::transforms {

using layout::IntTuple;
using layout::Layout;

std::vector<int64_t> tv_table(const layout::TVLayout& tv) {
  return layout_table(tv.layout());
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

}  // namespace tessel::transforms
