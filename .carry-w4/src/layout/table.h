// Offset tables: a constant layout evaluated at every index at once, for code that addresses whole
// tiles (layout synthesis, the thread-level interpreter).
#pragma once

#include <cstdint>
#include <vector>

#include "layout/layout.h"
#include "layout/swizzle.h"

namespace tessel::layout {

// L(i) for every i < size(L), by integer arithmetic over the flattened modes (evaluating through
// symbolic extents one index at a time is too slow for whole tiles). L must be constant.
std::vector<int64_t> layout_table(const Layout& l);
// The same for a swizzled layout: swizzle(offset + L(i)).
std::vector<int64_t> layout_table(const ComposedLayout& l);

}  // namespace tessel::layout
