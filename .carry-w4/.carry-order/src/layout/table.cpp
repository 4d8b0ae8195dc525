// Offset tables of constant layouts.
#include "layout/table.h"

namespace tessel::layout {

std::vector<int64_t> layout_table(const Layout& l) {
  Layout flat = flatten(l);
  std::vector<int64_t> shape, stride;
  for (const Extent& e : leaves(flat.shape())) shape.push_back(e.constant());
  for (const Extent& e : leaves(flat.stride())) stride.push_back(e.constant());
  int64_t size = 1;
  for (int64_t s : shape) size *= s;
  std::vector<int64_t> out(static_cast<size_t>(size));
  // Odometer over the modes, leftmost fastest.
  std::vector<int64_t> coord(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < size; ++i) {
    out[static_cast<size_t>(i)] = offset;
    for (size_t m = 0; m < shape.size(); ++m) {
      if (++coord[m] < shape[m]) {
        offset += stride[m];
        break;
      }
      offset -= stride[m] * (shape[m] - 1);
      coord[m] = 0;
    }
  }
  return out;
}

std::vector<int64_t> layout_table(const ComposedLayout& l) {
  std::vector<int64_t> out = layout_table(l.layout());
  for (int64_t& x : out) x = l.swizzle()(l.offset() + x);
  return out;
}

}  // namespace tessel::layout
