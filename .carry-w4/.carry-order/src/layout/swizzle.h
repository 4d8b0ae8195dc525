// Swizzle functors Sw<B,M,S> and swizzled (composed) layouts, as CuTe defines them.
//
// A swizzle permutes offsets by XOR-ing B bits taken from one place into another: with
// yyy = bits [M+S, M+S+B) and zzz = bits [M, M+B) of an offset x (for S > 0),
//   Sw<B,M,S>(x) = x ^ ((x & yyy_mask) >> S).
// M is the number of low bits kept together (the vector width in elements: 2^M), B the number of
// bits mixed (2^B rows of a pattern) and S the distance between them. A negative S shifts left.
// Sw<3,4,3> over 16-bit elements is the 128-byte swizzle that TMA and wgmma use (see HOPPER.md).
// A swizzle is a bijection on the integers and its own inverse.
//
// A ComposedLayout is Sw o offset o L: coordinate -> L -> + offset -> swizzle. It is how a
// swizzled shared-memory tile is described: L gives the logical (unswizzled) offset.
#pragma once

#include <string>

#include "layout/layout.h"

namespace tessel::layout {

struct Swizzle {
  int bits = 0;   // B
  int base = 0;   // M
  int shift = 0;  // S

  Swizzle() = default;
  // UserError unless 0 <= B, 0 <= M, |S| >= B and everything fits in 63 bits.
  Swizzle(int b, int m, int s);
  int64 yyy_mask() const;  // the bits that are read
  int64 zzz_mask() const;  // the bits that are flipped
  int64 operator()(int64 offset) const;
  bool is_identity() const { return bits == 0; }
  std::string str() const;  // "Sw<3,4,3>"
  friend bool operator==(const Swizzle& a, const Swizzle& b) {
    return a.bits == b.bits && a.base == b.base && a.shift == b.shift;
  }
};

// swizzle(offset + layout(coordinate)).
class ComposedLayout {
 public:
  ComposedLayout(Swizzle swizzle, int64 offset, Layout layout)
      : swizzle_(swizzle), offset_(offset), layout_(std::move(layout)) {}
  const Swizzle& swizzle() const { return swizzle_; }
  int64 offset() const { return offset_; }
  const Layout& layout() const { return layout_; }
  const IntTuple& shape() const { return layout_.shape(); }
  int64 size() const { return layout_.size(); }
  // The largest offset + 1 over the domain (computed by evaluation; a UserError past 2^20
  // elements).
  int64 cosize() const;
  int rank() const { return layout_.rank(); }
  int64 operator()(int64 index) const;
  int64 operator()(const IntTuple& coord) const;
  std::string str() const;  // "Sw<3,4,3> o 0 o (8,64):(64,1)"

 private:
  Swizzle swizzle_;
  int64 offset_;
  Layout layout_;
};

// Sw o L.
ComposedLayout composition(const Swizzle& swizzle, const Layout& layout);
// (Sw o off o L) o B = Sw o off o (L o B).
// Contract: R(i) == A(B(i)) for i < size(B).
ComposedLayout composition(const ComposedLayout& a, const Layout& b,
                           const Facts& facts = Facts::none());
ComposedLayout composition(const ComposedLayout& a, const Tiler& b,
                           const Facts& facts = Facts::none());

}  // namespace tessel::layout
