// Layout text in the IR, checked by the layout library.
#include "ir/layout_text.h"

#include "layout/parse.h"
#include "layout/tv_layout.h"

namespace tessel::ir {
namespace {

// Moves an error that the layout parser located by column inside `text` to the IR text's location.
[[noreturn]] void rethrow_at(const SourceLocation& loc, const UserError& error) {
  SourceLocation where = loc;
  if (where.column > 0 && error.location().column > 0) where.column += error.location().column - 1;
  user_error(where, "layout: ", error.message());
}

}  // namespace

std::string canonical_layout(std::string_view text, const SourceLocation& loc) {
  try {
    return layout::to_string(layout::parse_layout(text));
  } catch (const UserError& error) {
    rethrow_at(loc, error);
  }
}

std::string check_tensor_layout(const Type& type) {
  if (!type.is_tensor() || !type.has_layout()) return {};
  try {
    layout::Layout l = layout::parse_layout(type.layout());
    if (!is_static(type.shape())) return {};
    int64_t elements = 1;
    std::vector<layout::IntTuple> modes;
    for (int64_t e : type.static_shape()) {
      elements *= e;
      modes.emplace_back(e);
    }
    if (type.space() == MemorySpace::reg) {
      layout::TVLayout tv(l, layout::IntTuple(modes));  // checks rank 2 and the codomain
      (void)tv;
      return {};
    }
    if (l.is_constant() && l.size() != elements) {
      return "the layout " + type.layout() + " has " + std::to_string(l.size()) +
             " elements but the shape " + to_string(type.shape()) + " has " +
             std::to_string(elements);
    }
    // A layout of the tensor's rank maps its coordinates mode by mode: each mode covers one extent.
    if (l.rank() == type.rank() && type.rank() > 1) {
      std::vector<int64_t> extents = type.static_shape();
      for (int d = 0; d < type.rank(); ++d) {
        layout::Extent size = l.mode(d).size_extent();
        if (size.is_constant() && size.constant() != extents[d]) {
          return "mode " + std::to_string(d) + " of the layout " + type.layout() + " has " +
                 std::to_string(size.constant()) + " elements but extent " + std::to_string(d) +
                 " of the shape is " + std::to_string(extents[d]);
        }
      }
    } else if (type.rank() > 1 && l.rank() != 1) {
      return "the layout " + type.layout() + " has rank " + std::to_string(l.rank()) +
             " but the shape " + to_string(type.shape()) + " has rank " +
             std::to_string(type.rank());
    }
  } catch (const UserError& error) {
    return "the layout " + type.layout() + " does not fit " + type.str() + ": " + error.message();
  }
  return {};
}

}  // namespace tessel::ir
