// Layout utilities for the synthesis passes: fast evaluation tables, atoms tiled over a tile, and
// the layout constructions synthesize-layouts propagates (coalesced, projected, sliced).
#pragma once

#include <cstdint>
#include <optional>
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
// Whether each thread's values (a tv_table of T threads x V values over a tile of `rows` rows)
// come in runs of w consecutive elements along dimension d (0: down a column, 1: along a row),
// each run aligned to w: what one w-element vector access per run needs.
bool vector_along(const std::vector<int64_t>& table, int64_t T, int64_t V, int64_t rows, int64_t w,
                  int d);
// Whether two TV layouts are the same function (same threads, values, tile and elements), however
// their modes are grouped: ((2,2,8):(64,8,512)) and ((2,2,2),4):((64,8,512),1024) are equal.
bool same_tv(const layout::TVLayout& a, const layout::TVLayout& b);

// A tile shape as a layout tuple.
layout::IntTuple tuple_of(const std::vector<int64_t>& shape);

// The coalesced layout of a register tile (rank 1 or 2): each thread a vector of up to 16 bytes
// along the last dimension, threads along it first, then down the rows. With `span_threads`, a
// row (rank 1) with fewer vectors than `threads` is replicated over the rest (a stride-0 thread
// mode), so that it spans a block of `threads` fixed by a pin or an mma, as every register tensor
// of a kernel must; without, and for rank 2, it spans only the threads it needs.
layout::TVLayout coalesced_layout(const std::vector<int64_t>& shape, int elem_bits, int64_t threads,
                                  bool span_threads = false);
// The projection of a TV layout over `shape` that drops the dimensions `dims`: each thread keeps
// one value per remaining element; threads that shared a reduced row share the result.
layout::TVLayout project_layout(const layout::TVLayout& tv, const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& dims);

// The layout of `slice` (offsets, shape) of a register tile of `src_shape` laid out by `tv`: the
// same threads holding the same values of the window, when the window cuts only value modes and
// along each dimension it cuts the mode of the largest step, at multiples of that step (the column
// blocks of a wgmma accumulator: a [128,256] one's [128,64] quarter is the m64n64 layout). The
// nesting of `tv` is kept. nullopt when the window cuts a thread mode or a mode's steps.
std::optional<layout::TVLayout> slice_layout(const layout::TVLayout& tv,
                                             const std::vector<int64_t>& src_shape,
                                             const std::vector<int64_t>& offsets,
                                             const std::vector<int64_t>& shape);

}  // namespace tessel::transforms
