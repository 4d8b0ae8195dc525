// Layouts and CuTe's layout algebra (coalesce, composition, complement, inverses, divides,
// products).
#include "layout/layout.h"

#include <algorithm>
#include <ostream>
#include <unordered_set>

#include "support/diagnostics.h"

namespace tessel::layout {

namespace {

[[noreturn]] void fail(const std::string& message) {
  throw UserError(SourceLocation::unknown(), message);
}

struct Mode {
  Extent s, d;
};

std::vector<Mode> flat_modes(const Layout& l) {
  std::vector<Extent> s = leaves(l.shape()), d = leaves(l.stride());
  std::vector<Mode> out;
  for (size_t i = 0; i < s.size(); ++i) out.push_back({s[i], d[i]});
  return out;
}

Layout from_modes(const std::vector<Mode>& modes) {
  if (modes.empty()) return Layout();
  if (modes.size() == 1) return Layout(IntTuple(modes[0].s), IntTuple(modes[0].d));
  std::vector<IntTuple> s, d;
  for (const Mode& m : modes) {
    s.emplace_back(m.s);
    d.emplace_back(m.d);
  }
  return Layout(IntTuple(std::move(s)), IntTuple(std::move(d)));
}

bool is_one(const Extent& e) {
  return e.is_constant() && e.constant() == 1;
}
bool is_zero(const Extent& e) {
  return e.is_constant() && e.constant() == 0;
}
bool is_negative(const Extent& e) {
  return e.is_constant() && e.constant() < 0;
}

void check_positive_shape(const IntTuple& shape, const IntTuple& whole) {
  for (const Extent& e : leaves(shape)) {
    if (e.is_constant() && e.constant() <= 0) {
      fail("layout shape " + whole.str() + " has the extent " + e.str() +
           "; shape extents must be positive");
    }
  }
}

// Walks the leaves left to right without allocating (layouts are evaluated in hot loops); the
// last leaf takes what remains of the index.
void eval_leaves(const IntTuple& s, const IntTuple& d, bool last, int64& index, int64& offset) {
  if (s.is_leaf()) {
    int64 n = s.value().constant();
    int64 c = last ? index : index % n;
    index = last ? 0 : index / n;
    offset = checked_add(offset, checked_mul(c, d.value().constant()));
    return;
  }
  const std::vector<IntTuple>& se = s.elements();
  const std::vector<IntTuple>& de = d.elements();
  for (size_t i = 0; i < se.size(); ++i) {
    eval_leaves(se[i], de[i], last && i + 1 == se.size(), index, offset);
  }
}

int64 eval_flat(const Layout& l, int64 index) {
  int64 offset = 0;
  eval_leaves(l.shape(), l.stride(), true, index, offset);
  return offset;
}

int64 eval_coord(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride) {
  if (coord.is_leaf()) {
    int64 c = coord.as_int();
    int64 n = product(shape).constant();
    if (c < 0 || c >= n) {
      fail("coordinate " + std::to_string(c) + " is out of range for the shape " + shape.str() +
           " (size " + std::to_string(n) + ")");
    }
    if (shape.is_leaf()) return checked_mul(c, stride.value().constant());
    return eval_flat(Layout(shape, stride), c);
  }
  if (shape.is_leaf() || shape.rank() != coord.rank()) {
    fail("coordinate " + coord.str() + " does not match the shape " + shape.str());
  }
  int64 offset = 0;
  for (int i = 0; i < shape.rank(); ++i) {
    offset = checked_add(offset, eval_coord(coord[i], shape[i], stride[i]));
  }
  return offset;
}

}  // namespace

// ---- Layout -------------------------------------------------------------------------------------

Layout::Layout(IntTuple shape) : shape_(std::move(shape)) {
  check_positive_shape(shape_, shape_);
  stride_ = compact_col_major(shape_);
}

Layout::Layout(IntTuple shape, IntTuple stride)
    : shape_(std::move(shape)), stride_(std::move(stride)) {
  if (!congruent(shape_, stride_)) {
    fail("layout shape " + shape_.str() + " and stride " + stride_.str() + " are not congruent");
  }
  check_positive_shape(shape_, shape_);
}

Extent Layout::cosize_extent() const {
  Extent c(1);
  for (const Mode& m : flat_modes(*this)) {
    if (provably_positive(m.d)) c = c + (m.s - Extent(1)) * m.d;
  }
  return c;
}

Layout Layout::mode(int i) const {
  if (i < 0 || i >= rank()) {
    fail("mode " + std::to_string(i) + " of the rank-" + std::to_string(rank()) + " layout " +
         str() + " does not exist");
  }
  if (shape_.is_leaf()) return *this;
  return Layout(shape_[i], stride_[i]);
}

std::vector<Layout> Layout::modes() const {
  std::vector<Layout> out;
  for (int i = 0; i < rank(); ++i) out.push_back(mode(i));
  return out;
}

int64 Layout::operator()(int64 index) const {
  if (index < 0) fail("negative index " + std::to_string(index) + " into the layout " + str());
  if (!is_constant()) {
    fail("the layout " + str() + " has parametric extents; bind them before evaluating it");
  }
  return eval_flat(*this, index);
}

int64 Layout::operator()(const IntTuple& coord) const {
  if (!is_constant()) {
    fail("the layout " + str() + " has parametric extents; bind them before evaluating it");
  }
  return eval_coord(coord, shape_, stride_);
}

Layout Layout::bind(const Bindings& bindings) const {
  return Layout(substitute(shape_, bindings), substitute(stride_, bindings));
}

std::string Layout::str() const {
  return shape_.str() + ":" + stride_.str();
}

std::ostream& operator<<(std::ostream& out, const Layout& layout) {
  return out << layout.str();
}

// ---- Tiler --------------------------------------------------------------------------------------

Tiler Tiler::from_shape(const IntTuple& shape) {
  if (shape.is_leaf()) return Tiler(Layout(shape, IntTuple(1)));
  std::vector<Tiler> modes;
  for (const IntTuple& e : shape.elements()) modes.push_back(from_shape(e));
  return Tiler(std::move(modes));
}

IntTuple Tiler::shape() const {
  if (is_layout_) return layout_.shape();
  std::vector<IntTuple> out;
  for (const Tiler& t : modes_) out.push_back(t.shape());
  return IntTuple(std::move(out));
}

std::string Tiler::str() const {
  if (is_layout_) return layout_.str();
  std::string s = "<";
  for (size_t i = 0; i < modes_.size(); ++i) s += (i ? "," : "") + modes_[i].str();
  return s + ">";
}

// ---- Construction -------------------------------------------------------------------------------

Layout make_layout(const std::vector<Layout>& modes) {
  std::vector<IntTuple> s, d;
  for (const Layout& m : modes) {
    s.push_back(m.shape());
    d.push_back(m.stride());
  }
  return Layout(IntTuple(std::move(s)), IntTuple(std::move(d)));
}

Layout make_layout_row_major(const IntTuple& shape) {
  return Layout(shape, compact_row_major(shape));
}

Layout flatten(const Layout& layout) {
  return Layout(flatten(layout.shape()), flatten(layout.stride()));
}

Layout append(const Layout& layout, int rank) {
  if (layout.rank() >= rank) return layout;
  std::vector<Layout> modes = layout.modes();
  while (static_cast<int>(modes.size()) < rank) modes.push_back(Layout());
  return make_layout(modes);
}

// ---- coalesce / filter --------------------------------------------------------------------------

Layout coalesce(const Layout& layout) {
  std::vector<Mode> out;
  for (const Mode& m : flat_modes(layout)) {
    if (is_one(m.s)) continue;
    if (!out.empty() && m.d == out.back().s * out.back().d) {
      out.back().s = out.back().s * m.s;
      continue;
    }
    out.push_back(m);
  }
  return from_modes(out);
}

Layout coalesce(const Layout& layout, const IntTuple& profile) {
  if (profile.is_leaf()) return coalesce(layout);
  if (profile.rank() > layout.rank()) {
    fail("coalesce(" + layout.str() + ", " + profile.str() + "): the profile has " +
         std::to_string(profile.rank()) + " modes but the layout only " +
         std::to_string(layout.rank()));
  }
  std::vector<Layout> modes = layout.modes();
  for (int i = 0; i < profile.rank(); ++i) modes[i] = coalesce(modes[i], profile[i]);
  return make_layout(modes);
}

Layout filter(const Layout& layout) {
  std::vector<Mode> kept;
  for (const Mode& m : flat_modes(layout)) {
    if (!is_zero(m.d)) kept.push_back(m);
  }
  return coalesce(from_modes(kept));
}

// ---- composition --------------------------------------------------------------------------------

namespace {

struct CompositionContext {
  const Layout& a;
  const Layout& b;
  const Facts& facts;
  [[noreturn]] void error(const std::string& why) const {
    fail("composition(" + a.str() + ", " + b.str() + ") is not defined: " + why);
  }
};

// A (flat, coalesced modes) o s:d.
Layout compose_leaf(const std::vector<Mode>& a, const Extent& s, const Extent& d,
                    const CompositionContext& ctx) {
  if (is_zero(d)) return Layout(IntTuple(s), IntTuple(0));
  Extent rest_d = d, rest_s = s;
  std::vector<Mode> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool last = i + 1 == a.size();
    const Extent& ai = a[i].s;
    if (!last && divides(ai, rest_d, ctx.facts)) {
      rest_d = *exact_div(rest_d, ai, ctx.facts);  // skip the whole mode
      continue;
    }
    Extent shape_left;  // what remains of mode i after dividing out the stride
    if (!last) {
      std::optional<Extent> q = exact_div(ai, rest_d, ctx.facts);
      if (!q) {
        ctx.error("the stride divisibility condition fails: the remaining stride " + rest_d.str() +
                  " of " + s.str() + ":" + d.str() + " neither divides nor is a " +
                  "multiple of the extent " + ai.str() + " of mode " + std::to_string(i) +
                  " of coalesce(A) = " + from_modes(a).str() +
                  (ai.is_constant() && rest_d.is_constant()
                       ? std::string()
                       : " (cannot prove that " + missing_fact(ai, rest_d, ctx.facts) + ")"));
      }
      shape_left = *q;
    }
    Extent stride = a[i].d * rest_d;
    rest_d = Extent(1);
    if (last || provably_le(rest_s, shape_left, ctx.facts)) {
      out.push_back({rest_s, stride});
      rest_s = Extent(1);
      break;
    }
    std::optional<Extent> q = exact_div(rest_s, shape_left, ctx.facts);
    if (!q) {
      ctx.error("the shape divisibility condition fails: the remaining extent " + rest_s.str() +
                " of " + s.str() + ":" + d.str() + " is not a multiple of " + shape_left.str() +
                " (what is left of mode " + std::to_string(i) +
                " of coalesce(A) = " + from_modes(a).str() + ")" +
                (rest_s.is_constant() && shape_left.is_constant()
                     ? std::string()
                     : " (cannot prove that " + missing_fact(rest_s, shape_left, ctx.facts) + ")"));
    }
    out.push_back({shape_left, stride});
    rest_s = *q;
  }
  return coalesce(from_modes(out));
}

Layout compose_tree(const std::vector<Mode>& a, const IntTuple& shape, const IntTuple& stride,
                    const CompositionContext& ctx) {
  if (shape.is_leaf()) return compose_leaf(a, shape.value(), stride.value(), ctx);
  std::vector<Layout> modes;
  for (int i = 0; i < shape.rank(); ++i) modes.push_back(compose_tree(a, shape[i], stride[i], ctx));
  return make_layout(modes);
}

}  // namespace

namespace {

void sort_by_stride(std::vector<Mode>& modes, const Facts& facts, const std::string& what);

// Composition is computed mode by mode of B: A o (B0, B1) = (A o B0, A o B1). That equals A o B
// only if A is additive over B's offsets, A(x + y) = A(x) + A(y) for x, y from different modes.
// It is when A is a single (coalesced) mode, and when B's modes are *ordered* — sorted by stride,
// each stride a multiple of the extent of the modes below it — because then the per-mode
// divisibility conditions line B's digits up with A's. Otherwise (modes that interleave or
// overlap, e.g. (3,4):(2,3)) the mode-wise result can be wrong — CuTe returns it anyway — so it is
// checked by evaluation, and refused when it differs or cannot be checked.
void check_mode_wise(const std::vector<Mode>& flat_a, const Layout& r,
                     const CompositionContext& ctx) {
  if (flat_a.size() <= 1) return;
  std::vector<Mode> bm;
  for (const Mode& m : flat_modes(ctx.b)) {
    if (!is_one(m.s) && !is_zero(m.d)) bm.push_back(m);
  }
  bool ordered = true;
  std::string why;
  try {
    sort_by_stride(bm, ctx.facts, "composition");
    Extent current(1);
    for (const Mode& m : bm) {
      if (!(provably_le(current, m.d, ctx.facts) && divides(current, m.d, ctx.facts))) {
        ordered = false;
        why = "the modes of B interleave or overlap (stride " + m.d.str() +
              " is not a multiple of " + current.str() + ", the extent of the modes below it)";
        break;
      }
      current = m.s * m.d;
    }
  } catch (const UserError&) {
    ordered = false;
    why = "the order of B's strides cannot be proved from the declared facts";
  }
  if (ordered) return;
  Layout a = from_modes(flat_a);
  if (!a.is_constant() || !ctx.b.is_constant() || ctx.b.size() > (int64(1) << 20)) {
    ctx.error(why + ", and the mode-wise result cannot be checked by evaluation");
  }
  for (int64 i = 0; i < ctx.b.size(); ++i) {
    int64 want = a(ctx.b(i)), got = r(i);
    if (want != got) {
      ctx.error(why + ", and the mode-wise result " + r.str() + " gives " + std::to_string(got) +
                " at index " + std::to_string(i) + " where A(B(" + std::to_string(i) +
                ")) = " + std::to_string(want) + "; A o B is not a layout of B's shape");
    }
  }
}

}  // namespace

Layout composition(const Layout& a, const Layout& b, const Facts& facts) {
  CompositionContext ctx{a, b, facts};
  for (const Extent& d : leaves(b.stride())) {
    if (is_negative(d)) ctx.error("the right operand has the negative stride " + d.str());
  }
  std::vector<Mode> flat = flat_modes(coalesce(a));
  Layout r = compose_tree(flat, b.shape(), b.stride(), ctx);
  check_mode_wise(flat, r, ctx);
  return r;
}

Layout composition(const Layout& a, const Tiler& b, const Facts& facts) {
  if (b.is_layout()) return composition(a, b.layout(), facts);
  if (b.rank() > a.rank()) {
    fail("composition(" + a.str() + ", " + b.str() + "): the tiler has " +
         std::to_string(b.rank()) + " modes but the layout only " + std::to_string(a.rank()));
  }
  std::vector<Layout> modes = a.modes();
  for (int i = 0; i < b.rank(); ++i) modes[i] = composition(modes[i], b.modes()[i], facts);
  return make_layout(modes);
}

// ---- complement ---------------------------------------------------------------------------------

namespace {

// Sorts modes by stride, proving each comparison; UserError when the order cannot be proved.
void sort_by_stride(std::vector<Mode>& modes, const Facts& facts, const std::string& what) {
  // Insertion sort: n is tiny and each comparison needs a proof.
  for (size_t i = 1; i < modes.size(); ++i) {
    for (size_t j = i; j > 0; --j) {
      const Extent& x = modes[j - 1].d;
      const Extent& y = modes[j].d;
      if (provably_le(x, y, facts)) break;
      if (!provably_le(y, x, facts)) {
        fail(what + ": cannot order the strides " + x.str() + " and " + y.str() +
             " from the declared facts");
      }
      std::swap(modes[j - 1], modes[j]);
    }
  }
}

bool brute_force_injective(const Layout& l, bool& decided) {
  decided = false;
  if (!l.is_constant()) return false;
  int64 n = l.size();
  if (n > (int64(1) << 20)) return false;
  decided = true;
  std::unordered_set<int64> seen;
  seen.reserve(static_cast<size_t>(n));
  for (int64 i = 0; i < n; ++i) {
    if (!seen.insert(l(i)).second) return false;
  }
  return true;
}

}  // namespace

bool is_injective(const Layout& layout, const Facts& facts) {
  bool decided = false;
  bool result = brute_force_injective(layout, decided);
  if (decided) return result;
  // Sufficient condition: sorted strides each at least the previous mode's extent.
  std::vector<Mode> modes;
  for (const Mode& m : flat_modes(layout)) {
    if (is_one(m.s)) continue;
    if (is_zero(m.d)) return false;
    if (!provably_positive(m.d)) return false;
    modes.push_back(m);
  }
  try {
    sort_by_stride(modes, facts, "is_injective");
  } catch (const UserError&) {
    return false;
  }
  Extent current(1);
  for (const Mode& m : modes) {
    if (!provably_le(current, m.d, facts)) return false;
    current = m.s * m.d;
  }
  return true;
}

Layout complement(const Layout& a, const Extent& cotarget, const Facts& facts) {
  const std::string what = "complement(" + a.str() + ", " + cotarget.str() + ")";
  if (cotarget.is_constant() && cotarget.constant() <= 0) {
    fail(what + ": the cotarget must be positive");
  }
  std::vector<Mode> modes;
  for (const Mode& m : flat_modes(a)) {
    if (is_one(m.s) || is_zero(m.d)) continue;
    if (!provably_positive(m.d)) {
      fail(what + ": the stride " + m.d.str() + " is not positive");
    }
    modes.push_back(m);
  }
  sort_by_stride(modes, facts, what);
  Extent current(1);
  std::vector<Mode> out;
  for (const Mode& m : modes) {
    std::optional<Extent> q;
    if (provably_le(current, m.d, facts)) q = exact_div(m.d, current, facts);
    if (!q) {
      bool decided = false;
      bool injective = brute_force_injective(a, decided);
      if (decided && !injective) fail(what + ": the layout " + a.str() + " is not injective");
      fail(what + ": the layout's modes interleave (stride " + m.d.str() +
           " is not a multiple of " + current.str() +
           ", the extent of the modes below it), so its complement is not a layout");
    }
    out.push_back({*q, current});
    current = m.s * m.d;
  }
  out.push_back({ceil_div(cotarget, current, facts, what), current});
  return coalesce(from_modes(out));
}

Layout complement(const Layout& a, const Facts& facts) {
  return complement(a, a.cosize_extent(), facts);
}

// ---- inverses -----------------------------------------------------------------------------------

Layout right_inverse(const Layout& layout, const Facts& facts) {
  std::vector<Mode> modes = flat_modes(coalesce(layout));
  // Position of each mode in index space: the product of the extents before it.
  std::vector<Extent> position;
  Extent p(1);
  for (const Mode& m : modes) {
    position.push_back(p);
    p = p * m.s;
  }
  std::vector<Mode> out;
  Extent current(1);
  std::vector<bool> used(modes.size(), false);
  for (bool found = true; found;) {
    found = false;
    for (size_t i = 0; i < modes.size(); ++i) {
      if (used[i] || is_one(modes[i].s) || !(modes[i].d == current)) continue;
      out.push_back({modes[i].s, position[i]});
      current = modes[i].s * modes[i].d;
      used[i] = found = true;
      break;
    }
  }
  return coalesce(from_modes(out));
}

Layout left_inverse(const Layout& layout, const Facts& facts) {
  bool decided = false;
  bool injective = brute_force_injective(layout, decided);
  if (decided && !injective) {
    fail("left_inverse(" + layout.str() + "): the layout is not injective");
  }
  for (const Mode& m : flat_modes(layout)) {
    if (!is_one(m.s) && is_zero(m.d)) {
      fail("left_inverse(" + layout.str() + "): the layout is not injective (a mode of extent " +
           m.s.str() + " has stride 0)");
    }
  }
  try {
    return right_inverse(make_layout({layout, complement(layout, facts)}), facts);
  } catch (const UserError& e) {
    fail("left_inverse(" + layout.str() + "): " + e.message());
  }
}

// ---- divides ------------------------------------------------------------------------------------

Layout logical_divide(const Layout& a, const Tiler& b, const Facts& facts) {
  if (b.is_layout()) {
    const Layout& tile = b.layout();
    Layout rest;
    try {
      rest = complement(tile, a.size_extent(), facts);
    } catch (const UserError& e) {
      fail("logical_divide(" + a.str() + ", " + tile.str() + "): " + e.message());
    }
    return composition(a, make_layout({tile, rest}), facts);
  }
  if (b.rank() > a.rank()) {
    fail("logical_divide(" + a.str() + ", " + b.str() + "): the tiler has " +
         std::to_string(b.rank()) + " modes but the layout only " + std::to_string(a.rank()));
  }
  std::vector<Layout> modes = a.modes();
  for (int i = 0; i < b.rank(); ++i) modes[i] = logical_divide(modes[i], b.modes()[i], facts);
  return make_layout(modes);
}

namespace {

// Splits the by-mode result of logical_divide into its tile part and its rest part, recursively
// following the tiler's nesting (CuTe's tile_unzip).
void unzip(const Layout& divided, const Tiler& tiler, Layout& tile, Layout& rest) {
  if (tiler.is_layout()) {
    tile = divided.mode(0);
    rest = divided.mode(1);
    return;
  }
  std::vector<Layout> tiles, rests;
  for (int i = 0; i < tiler.rank(); ++i) {
    Layout t, r;
    unzip(divided.mode(i), tiler.modes()[i], t, r);
    tiles.push_back(t);
    rests.push_back(r);
  }
  for (int i = tiler.rank(); i < divided.rank(); ++i) rests.push_back(divided.mode(i));
  tile = make_layout(tiles);
  rest = make_layout(rests);
}

}  // namespace

Layout zipped_divide(const Layout& a, const Tiler& b, const Facts& facts) {
  Layout divided = logical_divide(a, b, facts);
  Layout tile, rest;
  unzip(divided, b, tile, rest);
  return make_layout({tile, rest});
}

Layout tiled_divide(const Layout& a, const Tiler& b, const Facts& facts) {
  Layout z = zipped_divide(a, b, facts);
  std::vector<Layout> modes{z.mode(0)};
  for (const Layout& m : z.mode(1).modes()) modes.push_back(m);
  return make_layout(modes);
}

Layout flat_divide(const Layout& a, const Tiler& b, const Facts& facts) {
  Layout z = zipped_divide(a, b, facts);
  std::vector<Layout> modes = z.mode(0).modes();
  for (const Layout& m : z.mode(1).modes()) modes.push_back(m);
  return make_layout(modes);
}

// ---- products -----------------------------------------------------------------------------------

Layout logical_product(const Layout& a, const Tiler& b, const Facts& facts) {
  if (b.is_layout()) {
    const Layout& tiler = b.layout();
    Layout rest;
    try {
      rest = complement(a, a.size_extent() * tiler.cosize_extent(), facts);
    } catch (const UserError& e) {
      fail("logical_product(" + a.str() + ", " + tiler.str() + "): " + e.message());
    }
    return make_layout({a, composition(rest, tiler, facts)});
  }
  if (b.rank() > a.rank()) {
    fail("logical_product(" + a.str() + ", " + b.str() + "): the tiler has " +
         std::to_string(b.rank()) + " modes but the layout only " + std::to_string(a.rank()));
  }
  std::vector<Layout> modes = a.modes();
  for (int i = 0; i < b.rank(); ++i) modes[i] = logical_product(modes[i], b.modes()[i], facts);
  return make_layout(modes);
}

Layout zipped_product(const Layout& a, const Tiler& b, const Facts& facts) {
  Layout product = logical_product(a, b, facts);
  Layout block, tile;
  unzip(product, b, block, tile);
  return make_layout({block, tile});
}

Layout tiled_product(const Layout& a, const Tiler& b, const Facts& facts) {
  Layout z = zipped_product(a, b, facts);
  std::vector<Layout> modes{z.mode(0)};
  for (const Layout& m : z.mode(1).modes()) modes.push_back(m);
  return make_layout(modes);
}

Layout flat_product(const Layout& a, const Tiler& b, const Facts& facts) {
  Layout z = zipped_product(a, b, facts);
  std::vector<Layout> modes = z.mode(0).modes();
  for (const Layout& m : z.mode(1).modes()) modes.push_back(m);
  return make_layout(modes);
}

namespace {
// CuTe's blocked/raked products: pad both to rank r, take the 1-D logical product (A, B'), and zip
// like modes together, (A_i, B'_i) or (B'_i, A_i). The hierarchy is kept (not coalesced) so that
// each mode still shows which part is the block and which the repetition.
Layout rank_sensitive_product(const Layout& a, const Layout& b, const Facts& facts, bool raked) {
  int r = std::max(a.rank(), b.rank());
  Layout pa = append(a, r), pb = append(b, r);
  Layout product = logical_product(pa, Tiler(pb), facts);
  Layout block = product.mode(0), grid = product.mode(1);
  if (r == 1) return raked ? make_layout({grid, block}) : make_layout({block, grid});
  std::vector<Layout> modes;
  for (int i = 0; i < r; ++i) {
    modes.push_back(raked ? make_layout({grid.mode(i), block.mode(i)})
                          : make_layout({block.mode(i), grid.mode(i)}));
  }
  return make_layout(modes);
}
}  // namespace

Layout blocked_product(const Layout& a, const Layout& b, const Facts& facts) {
  return rank_sensitive_product(a, b, facts, false);
}

Layout raked_product(const Layout& a, const Layout& b, const Facts& facts) {
  return rank_sensitive_product(a, b, facts, true);
}

// ---- max_common_vector --------------------------------------------------------------------------

Layout max_common_layout(const Layout& a, const Layout& b, const Facts& facts) {
  Layout inv_b = right_inverse(b, facts);
  Layout common;
  try {
    common = coalesce(composition(a, inv_b, facts));
  } catch (const UserError&) {
    return Layout();  // a o b^-1 is not a layout: only the element at offset 0 is known common
  }
  Layout first = common.mode(0);
  if (!first.stride().is_leaf() || !(first.stride().value() == Extent(1))) return Layout();
  return composition(inv_b, Layout(first.shape(), IntTuple(1)), facts);
}

int64 max_common_vector(const Layout& a, const Layout& b, const Facts& facts) {
  return max_common_layout(a, b, facts).size();
}

}  // namespace tessel::layout
