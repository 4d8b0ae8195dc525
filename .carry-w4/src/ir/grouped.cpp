#include "ir/grouped.h"

namespace tessel::ir {

GroupTile find_group_tile(int64_t groups, int64_t t, int64_t tile_rows,
                          const std::function<int64_t(int64_t)>& end) {
  int64_t before = 0, start = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t stop = end(g);
    if (stop < start) return {g, 0, start, stop - start};
    const int64_t tiles = (stop - start + tile_rows - 1) / tile_rows;
    if (t < before + tiles) return {g, t - before, start, stop - start};
    before += tiles;
    start = stop;
  }
  return {groups, 0, start, 0};
}

OverRead tile_over_read(const Operation& tile) {
  const Attribute* a = tile.attr("over_read");
  if (!a) return OverRead::none;
  return a->kind == Attribute::Kind::ident && a->s == "finite" ? OverRead::finite
                                                               : OverRead::unused;
}

}  // namespace tessel::ir
