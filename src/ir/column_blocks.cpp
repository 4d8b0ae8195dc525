#include "ir/column_blocks.h"

#include <vector>

#include "layout/layout.h"
#include "layout/parse.h"
#include "layout/table.h"

namespace tessel::ir {

int64_t ColumnBlocks::position(int64_t c) const {
  return layout::parse_layout(permutation)(c);
}

std::optional<ColumnBlocks> column_blocks(const Type& global) {
  if (!global.is_tensor() || global.space() != MemorySpace::global || global.rank() != 2 ||
      !global.has_layout())
    return std::nullopt;
  const layout::Layout l = layout::parse_layout(global.layout());
  if (l.rank() != 2) return std::nullopt;
  const layout::Layout rows = l.mode(0), cols = l.mode(1);
  const Extent& r = global.shape()[0];
  const Extent& c = global.shape()[1];
  // Mode 0: the rows, one row of C elements apart.
  if (!rows.shape().is_leaf() || rows.shape().value().str() != r.str() ||
      rows.stride().value().str() != c.str())
    return std::nullopt;
  // Mode 1: (P, C/B):(S, B) with P:S static.
  if (cols.shape().is_leaf() || cols.rank() != 2) return std::nullopt;
  const layout::Layout perm = cols.mode(0), blocks = cols.mode(1);
  if (!perm.shape().is_constant() || !perm.stride().is_constant() || !blocks.shape().is_leaf() ||
      !blocks.stride().is_leaf() || !blocks.stride().value().is_constant())
    return std::nullopt;
  const int64_t b = blocks.stride().value().constant();
  const std::string per_row = c.is_static() ? std::to_string(c.value / b) : c.str() + "/" +
                                                                               std::to_string(b);
  if (b < 2 || blocks.shape().value().str() != per_row) return std::nullopt;
  if (c.is_static() && c.value % b != 0) return std::nullopt;
  std::vector<int64_t> table = layout::layout_table(perm);
  if (static_cast<int64_t>(table.size()) != b) return std::nullopt;
  std::vector<bool> seen(static_cast<size_t>(b), false);
  for (int64_t p : table) {
    if (p < 0 || p >= b || seen[static_cast<size_t>(p)]) return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
  }
  return ColumnBlocks{b, layout::to_string(perm)};
}

}  // namespace tessel::ir
