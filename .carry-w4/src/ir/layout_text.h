// The bridge between the IR's text and the layout library: layouts in types and attributes are
// checked and kept in their canonical CuTe text.
#pragma once

#include <string>
#include <string_view>

#include "ir/type.h"
#include "layout/tv_layout.h"
#include "support/diagnostics.h"

namespace tessel::ir {

// Parses `text` as a layout (`shape:stride`, or a thread-value layout for register tensors) and
// returns its canonical printed form; a malformed layout is a UserError at `loc`.
std::string canonical_layout(std::string_view text, const SourceLocation& loc);

// Checks a tensor type's layout against its shape and memory space: a global or shared tensor's
// layout has as many elements as the shape; a register tensor's is a thread-value layout
// (T,V) -> shape. Returns the problem, or an empty string when there is none (or no layout).
std::string check_tensor_layout(const Type& type);

// The thread-value layout of a register tensor type with a layout and a static shape: (thread,
// value) -> the colexicographic index of an element of the shape (a rank-1 shape as its extent).
layout::TVLayout register_tv_layout(const Type& type);

}  // namespace tessel::ir
