// Integer tuples: structure queries, colexicographic coordinate <-> index, printing.
#include "layout/int_tuple.h"

#include <algorithm>
#include <ostream>

#include "support/diagnostics.h"

namespace tessel::layout {

const Extent& IntTuple::value() const {
  TESSEL_ASSERT(is_leaf_, "value() of the tuple ", str());
  return leaf_;
}

const std::vector<IntTuple>& IntTuple::elements() const {
  TESSEL_ASSERT(!is_leaf_, "elements() of the leaf ", str());
  return elements_;
}

std::vector<IntTuple>& IntTuple::elements() {
  TESSEL_ASSERT(!is_leaf_, "elements() of the leaf ", str());
  return elements_;
}

int IntTuple::depth() const {
  if (is_leaf_) return 0;
  int d = 0;
  for (const IntTuple& e : elements_) d = std::max(d, e.depth());
  return d + 1;
}

const IntTuple& IntTuple::operator[](int i) const {
  if (is_leaf_) {
    TESSEL_ASSERT(i == 0, "mode ", i, " of the leaf ", str());
    return *this;
  }
  TESSEL_ASSERT(i >= 0 && i < rank(), "mode ", i, " of ", str());
  return elements_[i];
}

bool IntTuple::is_constant() const {
  if (is_leaf_) return leaf_.is_constant();
  return std::all_of(elements_.begin(), elements_.end(),
                     [](const IntTuple& e) { return e.is_constant(); });
}

std::string IntTuple::str() const {
  if (is_leaf_) return leaf_.str();
  std::string s = "(";
  for (size_t i = 0; i < elements_.size(); ++i) {
    if (i > 0) s += ",";
    s += elements_[i].str();
  }
  return s + ")";
}

bool operator==(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf_ != b.is_leaf_) return false;
  if (a.is_leaf_) return a.leaf_ == b.leaf_;
  return a.elements_ == b.elements_;
}

Extent product(const IntTuple& t) {
  if (t.is_leaf()) return t.value();
  Extent p(1);
  for (const IntTuple& e : t.elements()) p = p * product(e);
  return p;
}

namespace {
void collect_leaves(const IntTuple& t, std::vector<Extent>& out) {
  if (t.is_leaf()) {
    out.push_back(t.value());
    return;
  }
  for (const IntTuple& e : t.elements()) collect_leaves(e, out);
}
}  // namespace

std::vector<Extent> leaves(const IntTuple& t) {
  std::vector<Extent> out;
  collect_leaves(t, out);
  return out;
}

IntTuple flatten(const IntTuple& t) {
  if (t.is_leaf()) return t;
  std::vector<IntTuple> out;
  for (const Extent& e : leaves(t)) out.emplace_back(e);
  return IntTuple(std::move(out));
}

bool congruent(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf() || b.is_leaf()) return a.is_leaf() && b.is_leaf();
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    if (!congruent(a[i], b[i])) return false;
  }
  return true;
}

bool compatible(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf()) return a.value() == product(b);
  if (b.is_leaf()) return false;
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    if (!compatible(a[i], b[i])) return false;
  }
  return true;
}

Extent inner_product(const IntTuple& a, const IntTuple& b) {
  TESSEL_ASSERT(congruent(a, b), "inner_product of ", a.str(), " and ", b.str());
  if (a.is_leaf()) return a.value() * b.value();
  Extent s(0);
  for (int i = 0; i < a.rank(); ++i) s = s + inner_product(a[i], b[i]);
  return s;
}

namespace {
IntTuple col_major(const IntTuple& shape, Extent& current) {
  if (shape.is_leaf()) {
    IntTuple r(current);
    current = current * shape.value();
    return r;
  }
  std::vector<IntTuple> out;
  for (const IntTuple& e : shape.elements()) out.push_back(col_major(e, current));
  return IntTuple(std::move(out));
}
IntTuple row_major(const IntTuple& shape, Extent& current) {
  if (shape.is_leaf()) {
    IntTuple r(current);
    current = current * shape.value();
    return r;
  }
  std::vector<IntTuple> out(shape.elements().size());
  for (int i = shape.rank() - 1; i >= 0; --i) out[i] = row_major(shape[i], current);
  return IntTuple(std::move(out));
}
}  // namespace

IntTuple compact_col_major(const IntTuple& shape, const Extent& start) {
  Extent current = start;
  return col_major(shape, current);
}

IntTuple compact_row_major(const IntTuple& shape) {
  Extent current(1);
  return row_major(shape, current);
}

IntTuple repeat_like(const IntTuple& t, const Extent& value) {
  if (t.is_leaf()) return IntTuple(value);
  std::vector<IntTuple> out;
  for (const IntTuple& e : t.elements()) out.push_back(repeat_like(e, value));
  return IntTuple(std::move(out));
}

IntTuple substitute(const IntTuple& t, const Bindings& bindings) {
  if (t.is_leaf()) return IntTuple(t.value().substitute(bindings));
  std::vector<IntTuple> out;
  for (const IntTuple& e : t.elements()) out.push_back(substitute(e, bindings));
  return IntTuple(std::move(out));
}

IntTuple idx2crd(int64 index, const IntTuple& shape) {
  if (shape.is_leaf()) return IntTuple(index);
  std::vector<IntTuple> out;
  for (int i = 0; i < shape.rank(); ++i) {
    int64 n = product(shape[i]).constant();
    if (i + 1 == shape.rank() || n == 0) {
      out.push_back(idx2crd(index, shape[i]));
      index = 0;
    } else {
      out.push_back(idx2crd(index % n, shape[i]));
      index /= n;
    }
  }
  return IntTuple(std::move(out));
}

int64 crd2idx(const IntTuple& coord, const IntTuple& shape) {
  if (coord.is_leaf()) {
    int64 c = coord.as_int();
    int64 n = product(shape).constant();
    if (c < 0 || c >= n) {
      user_error(SourceLocation::unknown(), "coordinate ", c, " is out of range for the shape ",
                 shape.str(), " (size ", n, ")");
    }
    return c;
  }
  if (shape.is_leaf() || shape.rank() != coord.rank()) {
    user_error(SourceLocation::unknown(), "coordinate ", coord.str(), " does not match the shape ",
               shape.str());
  }
  int64 index = 0, scale = 1;
  for (int i = 0; i < shape.rank(); ++i) {
    index = checked_add(index, checked_mul(scale, crd2idx(coord[i], shape[i])));
    scale = checked_mul(scale, product(shape[i]).constant());
  }
  return index;
}

std::ostream& operator<<(std::ostream& out, const IntTuple& value) {
  return out << value.str();
}

}  // namespace tessel::layout
