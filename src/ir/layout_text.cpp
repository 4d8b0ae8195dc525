// Layout text in the IR, checked by the layout library.
#include "ir/layout_text.h"

#include <cctype>

namespace tessel::ir {

std::string canonical_layout(std::string_view text, const SourceLocation& loc) {
  std::string out;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  if (out.empty()) user_error(loc, "expected a layout");
  int depth = 0;
  for (char c : out) {
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) user_error(loc, "unbalanced ')' in layout '", out, "'");
  }
  if (depth != 0) user_error(loc, "unbalanced '(' in layout '", out, "'");
  return out;
}

}  // namespace tessel::ir
