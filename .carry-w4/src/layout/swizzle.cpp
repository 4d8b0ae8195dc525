// Swizzle functors and composed layouts.
#include "layout/swizzle.h"

#include <algorithm>
#include <cstdlib>

#include "support/diagnostics.h"

namespace tessel::layout {

Swizzle::Swizzle(int b, int m, int s) : bits(b), base(m), shift(s) {
  if (b < 0 || m < 0 || std::abs(s) < b || b + m + std::abs(s) > 62) {
    user_error(SourceLocation::unknown(), "Swizzle<", b, ",", m, ",", s,
               "> is not valid: it needs B >= 0, M >= 0, |S| >= B and B+M+|S| <= 62");
  }
}

int64 Swizzle::yyy_mask() const {
  return ((int64(1) << bits) - 1) << (base + std::max(0, shift));
}

int64 Swizzle::zzz_mask() const {
  return ((int64(1) << bits) - 1) << (base - std::min(0, shift));
}

int64 Swizzle::operator()(int64 offset) const {
  int64 y = offset & yyy_mask();
  return offset ^ (shift >= 0 ? (y >> shift) : (y << -shift));
}

std::string Swizzle::str() const {
  return "Sw<" + std::to_string(bits) + "," + std::to_string(base) + "," + std::to_string(shift) +
         ">";
}

int64 ComposedLayout::cosize() const {
  int64 n = size(), m = 0;
  if (n > (int64(1) << 20)) {
    user_error(SourceLocation::unknown(), "cosize of the composed layout ", str(),
               ": too large to evaluate (", n, " elements)");
  }
  for (int64 i = 0; i < n; ++i) m = std::max(m, (*this)(i));
  return m + 1;
}

int64 ComposedLayout::operator()(int64 index) const {
  return swizzle_(checked_add(offset_, layout_(index)));
}

int64 ComposedLayout::operator()(const IntTuple& coord) const {
  return swizzle_(checked_add(offset_, layout_(coord)));
}

std::string ComposedLayout::str() const {
  return swizzle_.str() + " o " + std::to_string(offset_) + " o " + layout_.str();
}

ComposedLayout composition(const Swizzle& swizzle, const Layout& layout) {
  return ComposedLayout(swizzle, 0, layout);
}

ComposedLayout composition(const ComposedLayout& a, const Layout& b, const Facts& facts) {
  return ComposedLayout(a.swizzle(), a.offset(), composition(a.layout(), b, facts));
}

ComposedLayout composition(const ComposedLayout& a, const Tiler& b, const Facts& facts) {
  return ComposedLayout(a.swizzle(), a.offset(), composition(a.layout(), b, facts));
}

}  // namespace tessel::layout
