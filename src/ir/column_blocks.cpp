#include "ir/column_blocks.h"

#include <cctype>
#include <vector>

#include "layout/layout.h"
#include "layout/parse.h"
#include "layout/table.h"

namespace tessel::ir {

int64_t ColumnBlocks::position(int64_t c) const {
  return layout::parse_layout(permutation)(c);
}

namespace {

// A tensor extent as a layout extent: an integer, or a lone symbol (nothing else is recognized).
std::optional<layout::Extent> as_layout_extent(const Extent& e) {
  if (e.is_static()) return layout::Extent(e.value);
  const std::string name = e.str();
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return std::nullopt;
  for (char ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return std::nullopt;
  }
  return layout::Extent::symbol(name);
}

}  // namespace

std::optional<ColumnBlocks> column_blocks(const Type& global) {
  if (!global.is_tensor() || global.space() != MemorySpace::global || global.rank() < 2 ||
      !global.has_layout())
    return std::nullopt;
  const layout::Layout l = layout::parse_layout(global.layout());
  const int n = global.rank();
  if (l.rank() != n) return std::nullopt;
  // Modes 0 .. n-2: the leading dimensions, row-major (a batch of matrices, [E, N, K], keeps
  // each matrix's rows as a rank-2 tensor would): mode i one extent, its stride the product of
  // the extents after it.
  std::optional<layout::Extent> stride = as_layout_extent(global.shape()[n - 1]);
  for (int i = n - 2; i >= 0; --i) {
    const layout::Layout mode = l.mode(i);
    const std::optional<layout::Extent> extent = as_layout_extent(global.shape()[i]);
    if (!stride || !extent || !mode.shape().is_leaf() || !mode.stride().is_leaf() ||
        mode.shape().value() != *extent || mode.stride().value() != *stride)
      return std::nullopt;
    stride = *stride * *extent;
  }
  const layout::Layout cols = l.mode(n - 1);
  const Extent& c = global.shape()[n - 1];
  // The last mode: (P, C/B):(S, B) with P:S static.
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
