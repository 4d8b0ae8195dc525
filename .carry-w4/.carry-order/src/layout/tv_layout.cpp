// Thread-value layouts.
#include "layout/tv_layout.h"

#include "support/diagnostics.h"

namespace tessel::layout {

TVLayout::TVLayout(Layout layout, IntTuple tile_shape)
    : layout_(std::move(layout)), tile_shape_(std::move(tile_shape)) {
  if (layout_.rank() != 2) {
    user_error(SourceLocation::unknown(), "a TV layout must have rank 2 (threads, values), but ",
               layout_.str(), " has rank ", layout_.rank());
  }
  threads_ = layout_.mode(0);
  values_ = layout_.mode(1);
  if (layout_.is_constant() && tile_shape_.is_constant() && layout_.size() <= (int64(1) << 20)) {
    int64 tile = product(tile_shape_).constant();
    int64 n = layout_.size();
    // Every leaf's coordinate ranges over [0, extent) independently of the others, so the offsets
    // of all n indices lie in [sum of negative leaf spans, sum of positive ones], and both ends are
    // reached. Checking the ends is exact and O(leaves); the element-by-element walk below (which
    // names the first offender) runs only when an end is out of the tile. Layout synthesis builds
    // thousands of TV layouts of up to 2^15 elements: the walk was ~95% of its time.
    __int128 low = 0, high = 0;
    std::vector<Extent> shape = leaves(layout_.shape()), stride = leaves(layout_.stride());
    for (size_t k = 0; k < shape.size(); ++k) {
      __int128 span = static_cast<__int128>(shape[k].constant() - 1) * stride[k].constant();
      (span < 0 ? low : high) += span;
    }
    bool inside = n == 0 || (low >= 0 && high < tile);
    for (int64 i = 0; !inside && i < n; ++i) {
      int64 x = layout_(i);
      if (x < 0 || x >= tile) {
        user_error(SourceLocation::unknown(), "the TV layout ", layout_.str(), " maps (thread ",
                   i % threads_.size(), ", value ", i / threads_.size(), ") to ", x,
                   ", outside the tile ", tile_shape_.str(), " of size ", tile);
      }
    }
  }
}

int64 TVLayout::index(int64 thread, int64 value) const {
  if (thread < 0 || thread >= num_threads() || value < 0 || value >= num_values()) {
    user_error(SourceLocation::unknown(), "(thread ", thread, ", value ", value,
               ") is outside the TV layout ", str());
  }
  return layout_(thread + num_threads() * value);
}

IntTuple TVLayout::coord(int64 thread, int64 value) const {
  return idx2crd(index(thread, value), tile_shape_);
}

Layout TVLayout::inverse(const Facts& facts) const {
  Layout inv = right_inverse(layout_, facts);
  Extent tile = product(tile_shape_);
  if (!(inv.size_extent() == tile)) {
    user_error(SourceLocation::unknown(), "the TV layout ", str(),
               " has no inverse: its right inverse ", inv.str(), " covers ",
               inv.size_extent().str(), " of the ", tile.str(), " tile elements");
  }
  return composition(inv, Layout(tile_shape_), facts);
}

Layout TVLayout::compose(const Layout& tile_layout, const Facts& facts) const {
  if (!(tile_layout.size_extent() == product(tile_shape_))) {
    user_error(SourceLocation::unknown(), "cannot compose the TV layout ", str(),
               " with the tile layout ", tile_layout.str(), ": its size ",
               tile_layout.size_extent().str(), " is not the tile's ", product(tile_shape_).str());
  }
  return composition(tile_layout, layout_, facts);
}

std::string TVLayout::str() const {
  return layout_.str() + " : (T,V) -> " + tile_shape_.str();
}

TVLayout make_tv_layout(const Layout& thr, const Layout& val, const Facts& facts) {
  // Tile coordinate -> (thread, value) index, then invert it.
  Layout mn = raked_product(thr, val, facts);
  std::vector<IntTuple> tile;
  for (const Layout& m : mn.modes()) tile.emplace_back(m.size_extent());
  IntTuple tile_shape = mn.rank() == 1 ? IntTuple(mn.size_extent()) : IntTuple(std::move(tile));
  Layout inv = right_inverse(mn, facts);
  if (!(inv.size_extent() == mn.size_extent())) {
    user_error(SourceLocation::unknown(), "make_tv_layout(", thr.str(), ", ", val.str(),
               "): the thread and value layouts do not tile ", tile_shape.str(),
               " one-to-one (are they compact?)");
  }
  Layout tv = composition(
      inv, Layout(IntTuple::tuple({IntTuple(thr.size_extent()), IntTuple(val.size_extent())})),
      facts);
  return TVLayout(tv, tile_shape);
}

}  // namespace tessel::layout
