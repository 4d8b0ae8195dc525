// Layouts: functions from coordinates to offsets, and CuTe's algebra over them.
//
// A Layout is a pair of congruent IntTuples, shape:stride, e.g. `(4,(2,3)):(2,(1,8))`. It is a
// function. Its domain can be read three ways, all equivalent:
//   * a 1-D index i in [0, size) — decomposed colexicographically over the shape (leftmost mode
//     fastest) into a natural coordinate;
//   * a natural coordinate, congruent to the shape;
//   * any hierarchical coordinate in between, where an integer may stand for a whole sub-mode.
// The offset is the inner product of the natural coordinate with the stride. `size` is the number
// of coordinates (product of the shape); `cosize` is one past the largest offset (for non-negative
// strides), i.e. how much memory the layout spans. An index past `size` extends the last mode, as
// CuTe does; composition relies on this.
//
// The algebra (coalesce, composition, complement, inverses, divides, products) is CuTe's, with the
// same names and semantics, built from the primitives coalesce / composition / complement /
// concatenation the way CuTe builds them. Each function below states its contract; the unit tests
// check those contracts by brute-force evaluation on many generated layouts.
//
// Parametric extents: shapes and strides may hold symbols (M, N, K). Every operation that needs a
// divisibility or an order between extents proves it from the `Facts` it is given, or raises a
// UserError that names the operation, the operands and the missing fact. Evaluating an offset needs
// integer extents: `bind` substitutes the launch values first.
//
// Inadmissible arguments (a composition whose divisibility fails, the complement of a
// non-injective layout, ...) are UserErrors whose message names the operation and the operands.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "layout/int_tuple.h"

namespace tessel::layout {

class Layout {
 public:
  // The trivial layout 1:0.
  Layout() : shape_(1), stride_(0) {}
  // A compact column-major layout of `shape` (a bare shape in CuTe notation means this).
  explicit Layout(IntTuple shape);
  // UserError unless shape and stride are congruent and every integer shape extent is positive.
  Layout(IntTuple shape, IntTuple stride);

  const IntTuple& shape() const { return shape_; }
  const IntTuple& stride() const { return stride_; }
  // size and cosize as integers (UserError when parametric); the *_extent forms allow symbols.
  int64 size() const { return size_extent().constant(); }
  int64 cosize() const { return cosize_extent().constant(); }
  Extent size_extent() const { return product(shape_); }
  // 1 + sum over modes of (shape-1)*stride, counting positive strides only.
  Extent cosize_extent() const;
  int rank() const { return shape_.rank(); }
  int depth() const { return shape_.depth(); }
  bool is_constant() const { return shape_.is_constant() && stride_.is_constant(); }

  // Mode i as a layout (CuTe's layout<i>); mode 0 of a rank-1 leaf layout is the layout itself.
  Layout mode(int i) const;
  // The modes of the top level (a leaf layout has one mode: itself).
  std::vector<Layout> modes() const;

  // Offset of a 1-D index (index >= size extends the last mode). UserError when parametric or for
  // a negative index.
  int64 operator()(int64 index) const;
  // Offset of a natural or hierarchical coordinate.
  int64 operator()(const IntTuple& coord) const;
  // Substitutes launch values for symbols.
  Layout bind(const Bindings& bindings) const;

  // CuTe notation "shape:stride".
  std::string str() const;
  friend bool operator==(const Layout& a, const Layout& b) {
    return a.shape_ == b.shape_ && a.stride_ == b.stride_;
  }
  friend bool operator!=(const Layout& a, const Layout& b) { return !(a == b); }

 private:
  IntTuple shape_;
  IntTuple stride_;
};

std::ostream& operator<<(std::ostream& out, const Layout& layout);

// A tiler: a single Layout (applied to a layout as a 1-D function) or a tuple of tilers applied
// mode by mode, written `<3:3,(2,4):(1,8)>`. A shape used as a tiler means n:1 in each mode.
class Tiler {
 public:
  Tiler(Layout layout) : layout_(std::move(layout)), is_layout_(true) {}  // NOLINT
  explicit Tiler(std::vector<Tiler> modes) : modes_(std::move(modes)), is_layout_(false) {}
  // <n0:1, n1:1, ...> for a tuple shape (recursively), n:1 for a leaf.
  static Tiler from_shape(const IntTuple& shape);

  bool is_layout() const { return is_layout_; }
  const Layout& layout() const { return layout_; }
  const std::vector<Tiler>& modes() const { return modes_; }
  int rank() const { return is_layout_ ? 1 : static_cast<int>(modes_.size()); }
  // The shape of the tile this tiler selects (a tuple with one entry per by-mode element).
  IntTuple shape() const;
  std::string str() const;

 private:
  Layout layout_;
  std::vector<Tiler> modes_;
  bool is_layout_ = true;
};

// ---- Construction -------------------------------------------------------------------------------

// Concatenation (L0, L1, ...): a layout whose mode i is `modes[i]`.
Layout make_layout(const std::vector<Layout>& modes);
// shape:stride with compact column-major / row-major strides.
Layout make_layout_row_major(const IntTuple& shape);
// All nesting removed; the same function.
Layout flatten(const Layout& layout);
// Pads a layout to `rank` top-level modes with 1:0 (a leaf counts as rank 1).
Layout append(const Layout& layout, int rank);

// ---- The algebra --------------------------------------------------------------------------------
// Each function takes the Facts used to prove divisibility of parametric extents (none by default).

// coalesce(L): the same function on [0, size) with the fewest modes.
// Contract: size(R) == size(L); depth(R) <= 1; R(i) == L(i) for all i < size(L); no two adjacent
// modes of R could be merged; no mode of R has shape 1 (R is 1:0 when size is 1).
Layout coalesce(const Layout& layout);
// coalesce(L, profile): coalesces each sub-layout at the leaves of `profile` (by-mode).
// Contract: R(c) == L(c) for every coordinate c of L at the profile's level; rank(R_i) matches
// the profile where the profile is a tuple; modes beyond rank(profile) are kept as they are.
Layout coalesce(const Layout& layout, const IntTuple& profile);
// filter(L): coalesce after removing stride-0 modes (the distinct offsets, in order).
Layout filter(const Layout& layout);

// composition(A, B) = A o B.
// Contract: compatible(B.shape, R.shape); R(i) == A(B(i)) for all i < size(B), where an index
// B(i) >= size(A) extends the last mode of coalesce(A) (so trailing size-1 modes do not count).
// Requires non-negative strides in B and, for each mode of B, the stride and shape divisibility
// conditions against A's modes. R is computed mode by mode of B, as in CuTe; when B's modes
// interleave or overlap (e.g. (3,4):(2,3)) that is checked by evaluation, since CuTe's mode-wise
// answer can then differ from A o B. Each failure is a UserError naming A, B and the condition.
Layout composition(const Layout& a, const Layout& b, const Facts& facts = Facts::none());
// By-mode composition: mode i of A composed with tiler i; modes of A beyond the tiler are kept.
Layout composition(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());

// complement(A, cotarget): the layout of the "rest" of A up to cotarget.
// Contract: R has positive, increasing strides (R(i-1) < R(i)); R(i) is not in the image of A for
// 0 < i < size(R); (A, R) is injective; cosize((A, R)) >= cotarget. Requires A injective with
// each stride (sorted) a multiple of the previous mode's extent; else a UserError.
Layout complement(const Layout& a, const Extent& cotarget, const Facts& facts = Facts::none());
// complement(A) = complement(A, cosize(A)).
Layout complement(const Layout& a, const Facts& facts = Facts::none());

// right_inverse(L): the largest R (compact, of the form produced by walking L's stride-1 chain)
// with L(R(i)) == i for all i < size(R).
Layout right_inverse(const Layout& layout, const Facts& facts = Facts::none());
// left_inverse(L): R with R(L(i)) == i for all i < size(L). Requires L injective (UserError).
Layout left_inverse(const Layout& layout, const Facts& facts = Facts::none());

// logical_divide(A, B) = A o (B, complement(B, size(A))).
// Contract: R is (tile, rest); R(i) == A((B,B*)(i)); mode 0 of R == composition(A, B). With a
// by-mode tiler, mode i of R is logical_divide(A_i, B_i).
Layout logical_divide(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
// zipped_divide: ((tile modes...), (rest modes..., extra modes of A...)).
Layout zipped_divide(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
// tiled_divide: ((tile modes...), rest modes..., extra modes of A...).
Layout tiled_divide(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
// flat_divide: (tile modes..., rest modes..., extra modes of A...).
Layout flat_divide(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
// All three are the same function as logical_divide with its modes rearranged.

// logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B).
// Contract: R is (A, B'); mode 0 == A; compatible(B, mode 1); R injective when A and B are.
// With a by-mode tiler, mode i of R is logical_product(A_i, B_i).
Layout logical_product(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
// zipped_product: ((block modes...), (tile modes..., extra modes of A...)); tiled_product:
// ((block modes...), tile modes..., extra...); flat_product: (block modes..., tile modes...,
// extra...). The same function as logical_product with its modes regrouped (as the divides are).
Layout zipped_product(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
Layout tiled_product(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
Layout flat_product(const Layout& a, const Tiler& b, const Facts& facts = Facts::none());
// blocked_product(A, B): rank-sensitive product; with A, B padded to the same rank r and
// (A, B') = logical_product(A, B), mode i of R is (A_i, B'_i): A's blocks laid out by B.
// Contract: R((a_i + size(A_i)*b_i)_i) == A((a_i)_i) + B'((b_i)_i) for all block coordinates a
// and tile coordinates b; rank(R) == max(rank(A), rank(B)).
Layout blocked_product(const Layout& a, const Layout& b, const Facts& facts = Facts::none());
// raked_product(A, B): as blocked_product but mode i is (B'_i, A_i): A's elements interleaved (a
// cyclic distribution). Contract: R((b_i + size(B_i)*a_i)_i) == A(a) + B'(b).
Layout raked_product(const Layout& a, const Layout& b, const Facts& facts = Facts::none());

// max_common_layout(A, B): the largest layout C such that A(C(i)) == B(C(i)) == i for i < size(C)
// — the elements contiguous in both A and B. max_common_vector(A, B) = size of it (1 if none).
Layout max_common_layout(const Layout& a, const Layout& b, const Facts& facts = Facts::none());
int64 max_common_vector(const Layout& a, const Layout& b, const Facts& facts = Facts::none());

// Whether L maps distinct indices of [0, size) to distinct offsets (decided algebraically).
bool is_injective(const Layout& layout, const Facts& facts = Facts::none());

}  // namespace tessel::layout
