// Pictures of layouts: a text grid like CuTe's print_layout, and an SVG like CuTe's print_svg.
//
// A layout is drawn as a 2-D grid: rows are the coordinates of mode 0, columns the 1-D coordinates
// of the remaining modes (a rank-1 layout is one row), and each cell shows the offset. A TV layout
// is drawn over its tile: each cell shows which thread holds the element and in which value slot
// ("T5V2"; a '+' marks an element several threads hold, '.' one nobody holds), colored by thread.
// A swizzled layout is colored by the swizzled chunk (bits [M, M+B) of the offset), so the XOR
// pattern shows as diagonal stripes.
#pragma once

#include <string>
#include <vector>

#include "layout/layout.h"
#include "layout/swizzle.h"
#include "layout/tv_layout.h"

namespace tessel::layout {

struct LayoutPicture {
  std::string title;  // the layout in CuTe notation
  int64 rows = 0, cols = 0;
  std::vector<std::string> labels;  // rows*cols, cell (r, c) at r + rows*c
  std::vector<int64> color_keys;    // offset (layouts) or thread (TV); -1 for an empty cell
  int64 color_range = 1;            // number of distinct keys (for the color ramp)
  bool thread_colors = false;       // TV picture: a discrete palette by thread
};

// UserErrors: a parametric layout (bind it first) or more than 65536 cells.
LayoutPicture picture(const Layout& layout);
LayoutPicture picture(const ComposedLayout& layout);
LayoutPicture picture(const TVLayout& tv);

// The text grid (ends with a newline).
std::string render_table(const LayoutPicture& p);
// A standalone SVG document.
std::string render_svg(const LayoutPicture& p);

}  // namespace tessel::layout
