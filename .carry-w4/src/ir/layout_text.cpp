// Layout text in the IR, checked by the layout library.
#include "ir/layout_text.h"

#include <cctype>
#include <cstdio>
#include <optional>

#include "layout/parse.h"
#include "layout/swizzle.h"
#include "layout/tv_layout.h"

namespace tessel::ir {
namespace {

// Moves an error that the layout parser located by column inside `text` to the IR text's location.
[[noreturn]] void rethrow_at(const SourceLocation& loc, const UserError& error) {
  SourceLocation where = loc;
  if (where.column > 0 && error.location().column > 0) where.column += error.location().column - 1;
  user_error(where, "layout: ", error.message());
}

// A layout as the IR writes it: a plain layout, or a swizzled one `Sw<B,M,S> o [OFFSET o] L`.
struct IrLayout {
  std::optional<layout::ComposedLayout> composed;
  layout::Layout plain;
  const layout::Layout& base() const { return composed ? composed->layout() : plain; }
  std::string str() const { return composed ? composed->str() : layout::to_string(plain); }
};

IrLayout parse_ir_layout(std::string_view text) {
  IrLayout out;
  size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos || text.substr(start, 3) != "Sw<") {
    out.plain = layout::parse_layout(text);
    return out;
  }
  size_t close = text.find('>', start);
  if (close == std::string_view::npos)
    user_error(SourceLocation::at("<layout>", 1, static_cast<int>(start) + 1),
               "expected '>' to close Sw<B,M,S>");
  int b = 0, m = 0, sh = 0;
  std::string args(text.substr(start + 3, close - start - 3));
  if (std::sscanf(args.c_str(), "%d ,%d ,%d", &b, &m, &sh) != 3) {
    user_error(SourceLocation::at("<layout>", 1, static_cast<int>(start) + 4),
               "a swizzle reads Sw<B,M,S> with three integers");
  }
  std::string rest(text.substr(close + 1));
  auto expect_o = [&](std::string& r) {
    size_t p = r.find_first_not_of(" \t");
    if (p == std::string::npos || r[p] != 'o') {
      user_error(SourceLocation::at("<layout>", 1, static_cast<int>(close) + 2),
                 "expected 'o' after the swizzle (Sw<B,M,S> o LAYOUT)");
    }
    r = r.substr(p + 1);
  };
  expect_o(rest);
  int64_t offset = 0;
  // An optional integer offset: `Sw<..> o 0 o L`.
  size_t p = rest.find_first_not_of(" \t");
  size_t q = p;
  while (q < rest.size() && std::isdigit(static_cast<unsigned char>(rest[q]))) ++q;
  if (p != std::string::npos && q > p && rest.find_first_not_of(" \t", q) != std::string::npos &&
      rest[rest.find_first_not_of(" \t", q)] == 'o') {
    offset = std::stoll(rest.substr(p, q - p));
    rest = rest.substr(q);
    expect_o(rest);
  }
  out.composed =
      layout::ComposedLayout(layout::Swizzle(b, m, sh), offset, layout::parse_layout(rest));
  return out;
}

}  // namespace

std::string canonical_layout(std::string_view text, const SourceLocation& loc) {
  try {
    return parse_ir_layout(text).str();
  } catch (const UserError& error) {
    rethrow_at(loc, error);
  }
}

std::string check_tensor_layout(const Type& type) {
  if (!type.is_tensor() || !type.has_layout()) return {};
  try {
    IrLayout parsed = parse_ir_layout(type.layout());
    const layout::Layout& l = parsed.base();
    if (parsed.composed && type.space() != MemorySpace::shared) {
      return "a swizzled layout describes shared memory, not a " +
             std::string(to_string(type.space())) + " tensor";
    }
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

layout::TVLayout register_tv_layout(const Type& type) {
  TESSEL_ASSERT(type.is_tensor() && type.space() == MemorySpace::reg && type.has_layout() &&
                    is_static(type.shape()),
                "register_tv_layout needs a register tensor with a layout and a static shape, not ",
                type.str());
  std::vector<layout::IntTuple> modes;
  for (int64_t e : type.static_shape()) modes.emplace_back(e);
  return layout::TVLayout(layout::parse_layout(type.layout()),
                          modes.size() == 1 ? modes[0] : layout::IntTuple(modes));
}

}  // namespace tessel::ir
