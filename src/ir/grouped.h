// Grouped problems in the tile IR: `find_group` (which group a tile of a flat tile list belongs
// to) and tile windows (a tile addressing one group's rows of a tensor that holds every group's).
//
// A grouped GEMM computes G products C_g = A_g B_g^T of different row counts M_g in one launch.
// In the form MoE layers use (and torch._grouped_mm's `offs`), the groups' rows are concatenated:
// A is [sum M_g, K], C is [sum M_g, N], B is [G, N, K], and a device array `ends` of G int32
// holds the cumulative row counts (group g owns rows [ends[g-1], ends[g]), ends[-1] = 0). The
// row counts live on the device (an MoE router writes them), so the host cannot size the grid
// exactly; it sizes it by a bound and each block finds its group:
//
//   %g, %gt, %first, %rows = find_group %ends, %t {tile = R} : index, index, index, index
//       The tiles of the list are every group's cdiv(M_g, R) tiles of R rows, group by group.
//       Tile %t is tile %gt of group %g, whose rows start at %first and number %rows. Past the
//       last tile: %g = G, %gt = 0, %first = ends[G-1], %rows = 0. Empty groups have no tiles.
//       sum_g cdiv(M_g, R) <= cdiv(sum M_g, R) + G - 1, so a grid of that many tile rows
//       (computed from sizes, as every grid) covers the list; the extra ones find no group.
//
//   %t = tile %A, %gt, %k, %first, %rows {window = 0, masked, shape = [R, 64]}
//       A tile with a window along dimension 0: its coordinates count tiles from element %first
//       of that dimension, and elements at or past %first + %rows are outside the tile (masked:
//       reads give the pad, writes are dropped), as they are outside the tensor. A store into a
//       windowed tile never writes another group's rows.
//   `over_read` (with `window` and `masked`): reads past the window's end but inside the tensor
//       are unspecified — the tile program promises that they reach no store (A's row r only
//       feeds C's row r, which the window of C masks). That is what lets a TMA load, which clips
//       only at the tensor's bounds, serve the tile. The interpreter reads them as NaN, so a tile
//       program that breaks the promise shows NaN in its output.
//   `over_read = finite` (finite over-read): reads past the window's end are unspecified but
//       finite, and the tile program promises that a stored value depends on them only through
//       a product with an exact zero or the discarded operand of a `select`. Variable-length
//       attention needs this weaker promise: a key tile of sequence b that runs past the
//       sequence's end reads the next sequence's K and V rows (or, past the tensor, TMA's zero
//       fill); the masked score columns make P exactly 0 there (select to -inf, exp2(-inf) =
//       +0), but O += P·V still multiplies those zeros by the V rows read, so NaN there would
//       reach O, while any finite value adds exactly 0. Why the values are finite on the GPU:
//       inside the tensor they are other rows of the same input (finite when the inputs are —
//       the kernel's contract on its inputs, as for every kernel), past it TMA writes zeros.
//       The interpreter reads them as the element type's largest finite value (65504 in f16),
//       so a program that uses them in any other way shows a grossly wrong output against a
//       reference, and one that multiplies them by zeros gives the same bits as with the true
//       rows.
//   A store into a tile with either over_read is refused (reads past the window are
//   unspecified; writes must be dropped there).
//
// Indirect tiles (an MoE layer's routing: the down projection's rows scattered to their tokens'
// slots, vLLM's fused MoE writes its output so):
//
//   %t = tile %Y, %bt, %bn, %first, %rows, %slot {indirect = 0, window = 0, masked, shape = [R, C]}
//       The last operand %slot is a global i32 tensor of one dimension, L long (the row map).
//       Along the indirect dimension D the tile's coordinates are positions in the map, counted
//       as without `indirect` (tile index times extent, plus the window's first element): the
//       element at position i lives at the tensor's coordinate %slot[i] along D. Position i is
//       inside when i < L (and inside the window); the tensor's extent along D bounds the
//       values of the map instead: a value outside [0, extent) is the caller's error (the
//       interpreter reports it; the GPU writes or reads wherever it points). A map that sends
//       two positions to one element makes the order of their stores unspecified.
//   Rules (the verifier's): the tile is global and masked, D is not its innermost dimension
//   (rows are scattered, each row stays contiguous, so stores stay vectors), not squeezed, and
//   not over_read. Threads load and store indirect tiles as any global tile (16-byte vectors along
//   the rows); a TMA load of one is a 1-row box per row at the mapped row (positions outside load
//   the row past the tensor: zeros, so the transaction count stays the whole tile's); TMA stores
//   and stage-stores leave them alone.
//
// Interpreter, protocol check and emitter share the semantics below (find_group_tile,
// tile_over_read).
#pragma once

#include <cstdint>
#include <functional>

#include "ir/ir.h"

namespace tessel::ir {

struct GroupTile {
  int64_t group = 0;  // G past the last tile
  int64_t tile = 0;   // the tile's index within its group
  int64_t first = 0;  // the group's first row
  int64_t rows = 0;   // the group's row count (0 past the last tile)
};

// Tile `t` of the flat list of `groups` groups' tiles of `tile_rows` rows; `end(g)` reads the
// cumulative row count of groups 0..g. A decreasing `end` is a user error of the caller's
// choosing: this returns rows < 0 for it, and callers report it.
GroupTile find_group_tile(int64_t groups, int64_t t, int64_t tile_rows,
                          const std::function<int64_t(int64_t)>& end);

// What a tile promises about reads past its window's end (the attribute `over_read`).
enum class OverRead {
  none,    // no over_read: the window's end masks reads (the pad) and writes
  unused,  // `over_read`: unspecified values (NaN in the interpreter) that reach no store
  finite,  // `over_read = finite`: unspecified finite values, multiplied by zeros or discarded
};
// The tile's over_read, assuming the verifier accepted it (a bare flag or the word `finite`).
OverRead tile_over_read(const Operation& tile);

}  // namespace tessel::ir
