// Integer tuples: the nested shapes, strides and coordinates of the layout algebra.
//
// An IntTuple is either a leaf (an `Extent`: an integer or a parametric expression such as `M/64`)
// or a tuple of IntTuples, nested to any depth: `(4,(2,3))`. A one-element tuple `(8)` is distinct
// from the leaf `8` (as in CuTe). Coordinates are IntTuples too; a coordinate is mapped to an index
// *colexicographically* (the leftmost mode varies fastest), which is what makes a bare shape a
// column-major layout.
#pragma once

#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

#include "layout/extent.h"

namespace tessel::layout {

class IntTuple {
 public:
  IntTuple() : IntTuple(Extent(0)) {}
  IntTuple(int64 value) : leaf_(value), is_leaf_(true) {}              // NOLINT
  IntTuple(int value) : leaf_(int64(value)), is_leaf_(true) {}         // NOLINT
  IntTuple(Extent value) : leaf_(std::move(value)), is_leaf_(true) {}  // NOLINT
  explicit IntTuple(std::vector<IntTuple> elements)
      : elements_(std::move(elements)), is_leaf_(false) {}
  // A tuple (never a leaf), e.g. IntTuple::tuple({4, IntTuple::tuple({2, 3})}).
  static IntTuple tuple(std::initializer_list<IntTuple> elements) {
    return IntTuple(std::vector<IntTuple>(elements));
  }

  bool is_leaf() const { return is_leaf_; }
  bool is_tuple() const { return !is_leaf_; }
  // The leaf value (asserts is_leaf()).
  const Extent& value() const;
  // The leaf as an integer (UserError when parametric).
  int64 as_int() const { return value().constant(); }
  // The elements of a tuple (asserts is_tuple()).
  const std::vector<IntTuple>& elements() const;
  std::vector<IntTuple>& elements();

  // rank: 1 for a leaf, the number of elements for a tuple.
  int rank() const { return is_leaf_ ? 1 : static_cast<int>(elements_.size()); }
  // depth: 0 for a leaf, 1 + max depth of the elements for a tuple (1 for the empty tuple).
  int depth() const;
  // Mode i: the leaf itself for a leaf and i == 0, else the i-th element.
  const IntTuple& operator[](int i) const;

  // Whether every leaf is an integer.
  bool is_constant() const;
  // CuTe notation: "8", "(4,(2,3))", "(8)", "M/64".
  std::string str() const;

  friend bool operator==(const IntTuple& a, const IntTuple& b);
  friend bool operator!=(const IntTuple& a, const IntTuple& b) { return !(a == b); }

 private:
  Extent leaf_;
  std::vector<IntTuple> elements_;
  bool is_leaf_ = true;
};

// Product of all leaves (1 for the empty tuple).
Extent product(const IntTuple& t);
// All leaves, left to right.
std::vector<Extent> leaves(const IntTuple& t);
// The tuple with all nesting removed: a leaf stays a leaf; a tuple becomes a flat tuple of leaves.
IntTuple flatten(const IntTuple& t);
// Same tree structure (leaf where leaf, tuple of equal rank where tuple).
bool congruent(const IntTuple& a, const IntTuple& b);
// Whether shape `b` is compatible with shape `a`: sizes agree and every coordinate of `a` is a
// coordinate of `b` (a leaf of a may stand for a whole subtree of b with the same size).
bool compatible(const IntTuple& a, const IntTuple& b);
// Sum over leaves of a_i * b_i (a and b congruent).
Extent inner_product(const IntTuple& a, const IntTuple& b);
// The compact column-major strides of a shape: (4,(2,3)) -> (1,(4,8)).
IntTuple compact_col_major(const IntTuple& shape, const Extent& start = Extent(1));
// The compact row-major strides of a shape (the last mode varies fastest).
IntTuple compact_row_major(const IntTuple& shape);
// A tuple of the same structure with every leaf set to `value`.
IntTuple repeat_like(const IntTuple& t, const Extent& value);
// Replaces the bound symbols by their values in every leaf.
IntTuple substitute(const IntTuple& t, const Bindings& bindings);

// The colexicographic coordinate of a 1-D index in `shape` (a leaf shape takes the index itself;
// the result is congruent to `shape`). Requires an integer shape.
IntTuple idx2crd(int64 index, const IntTuple& shape);
// The 1-D colexicographic index of a coordinate (the coordinate may be a 1-D integer at any level
// where `shape` has a tuple). A UserError when the coordinate does not fit the shape.
int64 crd2idx(const IntTuple& coord, const IntTuple& shape);

std::ostream& operator<<(std::ostream& out, const IntTuple& value);

}  // namespace tessel::layout
