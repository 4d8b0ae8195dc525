// The interpreter's view ops: `tile` (a tile of a tensor, masked at its edges, squeezed
// dimensions dropped), `global_view` (a tensor seen through a layout) and `transpose` — new views
// of the same storage, no element copied.
#include <algorithm>

#include "interp/interpreter.h"
#include "interp/machine.h"
#include "support/diagnostics.h"

namespace tessel::interp {
namespace detail {

void Machine::tile(const Operation& op) {
  const View& src = get(op.operand(0)).tensor;
  const auto& shape = op.ints_attr("shape");
  View t = src;
  std::vector<int64_t> start(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t coord = index(op.operand(static_cast<int>(d) + 1));
    if (coord < 0) {
      user_error(op.loc(), "tile: tile coordinate ", coord, " in dimension ", d, " is negative");
    }
    start[d] = coord * shape[d];
    if (src.map) {
      t.map_origin[src.map_dim[d]] += start[d];
    } else {
      t.offset += start[d] * src.strides[d];
    }
    t.valid[d] = std::clamp<int64_t>(src.valid[d] - start[d], 0, shape[d]);
    t.shape[d] = shape[d];
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
  }
  set_tensor(op.result(), t);
}

}  // namespace detail
}  // namespace tessel::interp
