// The bridge between the IR's text and the layout library: layouts in types and attributes are
// checked and kept in their canonical CuTe text.
#pragma once

#include <string>
#include <string_view>

#include "support/diagnostics.h"

namespace tessel::ir {

// Parses `text` as a layout (`shape:stride`, or a thread-value layout for register tensors) and
// returns its canonical printed form; a malformed layout is a UserError at `loc`.
std::string canonical_layout(std::string_view text, const SourceLocation& loc);

}  // namespace tessel::ir
