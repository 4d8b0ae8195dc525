// The interpreter's view ops: `tile` (a tile of a tensor, masked at its edges, squeezed
// dimensions dropped), `global_view` (a tensor seen through a layout) and `transpose` — new views
// of the same storage, no element copied.
#include <algorithm>

#include "interp/interpreter.h"
#include "interp/machine.h"
#include "ir/grouped.h"
#include "support/diagnostics.h"

namespace tessel::interp {
namespace detail {

void Machine::tile(const Operation& op) {
  const View& src = get(op.operand(0)).tensor;
  const auto& shape = op.ints_attr("shape");
  View t = src;
  std::vector<int64_t> start(shape.size());
  // A window (src/ir/grouped.h): coordinates count from its first element, and its end masks.
  const int window = ir::tile_window_dim(op);
  int64_t window_first = 0, window_end = 0;
  if (window >= 0) {
    const int rank = static_cast<int>(shape.size());
    window_first = index(op.operand(rank + 1));
    const int64_t extent = index(op.operand(rank + 2));
    if (window_first < 0 || extent < 0) {
      user_error(op.loc(), "tile: the window [", window_first, ", +", extent, ") is negative");
    }
    window_end = window_first + extent;
  }
  const int indirect = ir::tile_indirect_dim(op);
  if (indirect >= 0 &&
      (src.map || src.indirect_dim >= 0 || src.dim_map.size() != src.root_shape.size())) {
    user_error(op.loc(), "tile: an indirect tile is a tile of a whole tensor, not of a view");
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t coord = index(op.operand(static_cast<int>(d) + 1));
    if (coord < 0) {
      user_error(op.loc(), "tile: tile coordinate ", coord, " in dimension ", d, " is negative");
    }
    start[d] = coord * shape[d] + (static_cast<int>(d) == window ? window_first : 0);
    if (static_cast<int>(d) == indirect) {
      indirect_rows(op, t, d, start[d], shape[d]);
    } else if (src.map) {
      t.map_origin[src.map_dim[d]] += start[d];
    } else {
      t.offset += start[d] * src.strides[d];
    }
    if (static_cast<int>(d) != indirect)
      t.valid[d] = std::clamp<int64_t>(src.valid[d] - start[d], 0, shape[d]);
    t.shape[d] = shape[d];
    if (static_cast<int>(d) == src.over_dim) {
      t.over_valid = std::clamp<int64_t>(src.over_valid - start[d], 0, shape[d]);
    }
    if (static_cast<int>(d) == window) {
      const int64_t in_window = std::clamp<int64_t>(window_end - start[d], 0, shape[d]);
      if (op.has_attr("over_read")) {
        // Reads past the window's end are unspecified: NaN here, or the largest finite value
        // for over_read = finite.
        t.over_dim = window;
        t.over_valid = in_window;
        t.over_finite = ir::tile_over_read(op) == ir::OverRead::finite;
      } else {
        t.valid[d] = std::min(t.valid[d], in_window);
      }
    }
  }
  t.origin = root_index(src, start);
  if (op.has_attr("masked")) {
    t.masked = true;
    double pad = op.has_attr("pad") ? op.real_attr("pad") : 0.0;
    t.pad = element_from_double(src.element, pad);
  }
  // Drop squeezed dimensions (their extent is 1 and their coordinate is fixed by `start`). When
  // a squeezed dimension lies outside the tensor, so does every element of the tile.
  View out = t;
  out.shape.clear();
  out.strides.clear();
  out.valid.clear();
  out.dim_map.clear();
  out.map_dim.clear();
  const std::vector<int> kept = ir::tile_kept_dims(op);
  if (t.over_dim >= 0) {
    auto at = std::find(kept.begin(), kept.end(), t.over_dim);
    if (at == kept.end()) user_error(op.loc(), "tile: squeezes its window's dimension");
    out.over_dim = static_cast<int>(at - kept.begin());
  }
  if (t.indirect_dim >= 0) {  // (the verifier keeps it from being squeezed)
    auto at = std::find(kept.begin(), kept.end(), t.indirect_dim);
    out.indirect_dim = static_cast<int>(at - kept.begin());
  }
  bool all_outside = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(kept.begin(), kept.end(), static_cast<int>(d)) == kept.end()) {
      all_outside = all_outside || t.valid[d] == 0;
      continue;
    }
    out.shape.push_back(t.shape[d]);
    out.strides.push_back(t.strides[d]);
    out.valid.push_back(t.valid[d]);
    out.dim_map.push_back(t.dim_map[d]);
    if (t.map) out.map_dim.push_back(t.map_dim[d]);
  }
  if (all_outside) std::fill(out.valid.begin(), out.valid.end(), 0);
  set_tensor(op.result(), out);
}

// src/ir/grouped.h, indirect tiles: dimension d of tile `t` (positions start .. start + extent
// of the row map, the tile's last operand) addresses the rows the map holds there. Positions past
// the map's end are outside the tile; a row outside the tensor is the caller's error.
void Machine::indirect_rows(const Operation& op, View& t, size_t d, int64_t start, int64_t extent) {
  const Value* map_value = ir::tile_indirect_map(op);
  const View& map = get(map_value).tensor;
  const int64_t rows = t.valid[d];  // the tensor's extent along d (t is a whole tensor's view)
  t.valid[d] = std::clamp<int64_t>(map.shape[0] - start, 0, extent);
  auto offsets = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(extent), 0);
  for (int64_t i = 0; i < t.valid[d]; ++i) {
    const int64_t row = read(op, map, {start + i}).i;
    if (row < 0 || row >= rows) {
      user_error(op.loc(), "tile: the row map ", ir::value_ref(map_value), " sends position ",
                 start + i, " to row ", row, ", outside the ", rows, " of ",
                 ir::value_ref(op.operand(0)));
    }
    (*offsets)[static_cast<size_t>(i)] = row * t.strides[d];
  }
  t.indirect_dim = static_cast<int>(d);
  t.indirect_offsets = std::move(offsets);
}

// src/ir/grouped.h: the group of tile %t of the flat list of every group's tiles.
void Machine::find_group(const Operation& op) {
  const View& ends = get(op.operand(0)).tensor;
  const int64_t groups = ends.shape[0];
  const ir::GroupTile g = ir::find_group_tile(groups, index(op.operand(1)), op.int_attr("tile"),
                                              [&](int64_t i) { return read(op, ends, {i}).i; });
  if (g.rows < 0) {
    user_error(op.loc(), "find_group: the row ends decrease at group ", g.group, " (",
               g.first + g.rows, " after ", g.first, ")");
  }
  set_scalar(op.result(0), Element{0, g.group});
  set_scalar(op.result(1), Element{0, g.tile});
  set_scalar(op.result(2), Element{0, g.first});
  set_scalar(op.result(3), Element{0, g.rows});
}

void Machine::global_view(const Operation& op) {
  const View& src = get(op.operand(0)).tensor;
  const Type& t = op.result()->type();
  if (src.map)
    user_error(op.loc(), "global_view: the interpreter views a plain tensor, not another view");
  View v = src;
  v.map =
      std::make_shared<const layout::Layout>(layout::parse_layout(t.layout()).bind(options_.sizes));
  v.shape = concrete_shape(t, options_.sizes);
  if (v.map->rank() != static_cast<int>(v.shape.size()) && v.shape.size() != 1) {
    user_error(op.loc(), "global_view: the interpreter needs a layout of the view's rank");
  }
  v.valid = v.shape;
  v.strides.assign(v.shape.size(), 0);
  v.map_origin.assign(v.shape.size(), 0);
  v.map_dim.clear();
  v.dim_map.clear();
  for (size_t d = 0; d < v.shape.size(); ++d) {
    v.map_dim.push_back(static_cast<int>(d));
    v.dim_map.push_back(static_cast<int>(d));
  }
  v.root_name = ir::value_ref(op.result());
  v.root_shape = v.shape;
  v.origin.assign(v.shape.size(), 0);
  set_tensor(op.result(), v);
}

void Machine::transpose(const Operation& op) {
  const RtValue& src = get(op.operand(0));
  const View& v = src.tensor;
  std::vector<int64_t> perm =
      op.has_attr("perm") ? op.ints_attr("perm") : std::vector<int64_t>{1, 0};
  View t = v;
  for (size_t d = 0; d < perm.size(); ++d) {
    t.shape[d] = v.shape[perm[d]];
    t.strides[d] = v.strides[perm[d]];
    t.valid[d] = v.valid[perm[d]];
    t.dim_map[d] = v.dim_map[perm[d]];
    if (v.map) t.map_dim[d] = v.map_dim[perm[d]];
    if (v.over_dim == perm[d]) t.over_dim = static_cast<int>(d);
    if (v.indirect_dim == perm[d]) t.indirect_dim = static_cast<int>(d);
  }
  set_tensor(op.result(), t);
}

}  // namespace detail
}  // namespace tessel::interp
