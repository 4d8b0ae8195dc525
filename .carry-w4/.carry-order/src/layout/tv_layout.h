// Thread-value layouts: which thread holds which element of a tile, in which register slot.
//
// A TV layout (Hexcute §2.3, Graphene "threads as tensors") is a layout whose domain is a pair
// (thread, value) — mode 0 ranges over the threads that share a tile, mode 1 over the values each
// thread holds — and whose codomain is the colexicographic index of an element of a tile of shape
// `tile_shape` (for a 2-D tile (M,N): m + M*n). Written `(T,V) -> (M,N)`. Example, the f32
// accumulator of mma.sync m16n8k16: ((4,8),(2,2)):((32,1),(16,8)) over (16,8).
//
// A TV layout need not be injective: a stride-0 thread mode broadcasts (several threads hold the
// same element). `inverse()` maps each tile element to one (thread, value) index t + T*v that holds
// it; it exists when the TV layout reaches every element of the tile. `compose(L)` applies a tile
// layout (tile coordinate -> memory offset) after the TV layout, giving (T,V) -> offset, which is
// how a thread finds its data in a shared or global tile.
#pragma once

#include <string>

#include "layout/layout.h"

namespace tessel::layout {

class TVLayout {
 public:
  TVLayout() = default;
  // UserError unless `layout` has rank 2 and (when concrete) maps into [0, size(tile_shape)).
  TVLayout(Layout layout, IntTuple tile_shape);

  const Layout& layout() const { return layout_; }
  const IntTuple& tile_shape() const { return tile_shape_; }
  const Layout& thread_layout() const { return threads_; }  // mode 0
  const Layout& value_layout() const { return values_; }    // mode 1
  int64 num_threads() const { return threads_.size(); }
  int64 num_values() const { return values_.size(); }

  // The tile index (colexicographic) of value v of thread t.
  int64 index(int64 thread, int64 value) const;
  // The tile coordinate (congruent to tile_shape) of value v of thread t.
  IntTuple coord(int64 thread, int64 value) const;

  // Tile coordinate -> (thread, value) index t + T*v of one owner of that element.
  // Contract: for every tile index i: layout()(inverse()(i)) == i. UserError when some element
  // of the tile is not reached in a way a layout can invert.
  Layout inverse(const Facts& facts = Facts::none()) const;
  // (T,V) -> offset: composition(tile_layout, layout()). tile_layout maps tile coordinates (its
  // size must equal the tile's) to offsets.
  // Contract: R(t + T*v) == tile_layout(index(t, v)).
  Layout compose(const Layout& tile_layout, const Facts& facts = Facts::none()) const;

  // "((4,8),(2,2)):((32,1),(16,8)) : (T,V) -> (16,8)"
  std::string str() const;

 private:
  Layout layout_;
  IntTuple tile_shape_;
  Layout threads_, values_;
};

// CuTe's make_layout_tv: the TV layout of a tile partitioned by a thread layout (tile coordinate
// -> thread) and a value layout (tile coordinate -> value) of the same rank. The tile is
// raked_product(thr, val): each thread's values are contiguous blocks of shape(val), and the
// threads are arranged over the blocks by thr.
// Contract: the result is a bijection between (T,V) = (size thr, size val) and the tile, and
// thread t's values are exactly the tile elements whose block coordinate thr maps to t.
TVLayout make_tv_layout(const Layout& thr, const Layout& val, const Facts& facts = Facts::none());
// CuTe's name for the same function.
inline TVLayout make_layout_tv(const Layout& thr, const Layout& val,
                               const Facts& facts = Facts::none()) {
  return make_tv_layout(thr, val, facts);
}

}  // namespace tessel::layout
