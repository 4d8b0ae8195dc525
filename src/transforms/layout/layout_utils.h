// Layout utilities for the synthesis passes: fast evaluation tables and atoms tiled over a tile.
#pragma once

#include <cstdint>
#include <vector>

#include "layout/swizzle.h"
#include "layout/table.h"
#include "layout/tv_layout.h"

namespace tessel::transforms {

// L(i) for every i < size(L) (layout/table.h; the thread interpreter shares it).
using layout::layout_table;

// An atom's TV layout over its (ma, na) tile, tiled over an (M, N) tile: `tm` x `tn` copies of the
// atom's threads (tm along M fastest, then tn along N), and the rest of the tile as repeated
// values (along M first, then N). Thread t + T_atom*(i + tm*j) is atom thread t of copy (i, j).
// Contract: for thread (t, i, j) and value (v, a, b) the element is the atom's element (t, v)
// shifted by rows ma*(i + tm*a) and columns na*(j + tn*b). UserError unless M = ma*tm*rm and
// N = na*tn*rn for integers rm, rn.
layout::TVLayout tile_atom(const layout::TVLayout& atom, int64_t m, int64_t n, int64_t tm,
                           int64_t tn);

// The one-mode layout size:stride (stride 0 when size is 1), and a list of modes without its
// size-1 ones (1:0 when nothing is left): the pieces synthesis assembles TV layouts from.
layout::Layout single(int64_t size, int64_t stride);
layout::Layout tidy(const std::vector<layout::Layout>& modes);

// The tile index (colexicographic over `tile_shape`) of each (thread, value) index t + T*v.
std::vector<int64_t> tv_table(const layout::TVLayout& tv);
// Whether two TV layouts are the same function (same threads, values, tile and elements), however
// their modes are grouped: ((2,2,8):(64,8,512)) and ((2,2,2),4):((64,8,512),1024) are equal.
bool same_tv(const layout::TVLayout& a, const layout::TVLayout& b);

}  // namespace tessel::transforms
