// Text grids and SVG pictures of layouts and TV layouts.
#include "layout/print.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "support/diagnostics.h"

namespace tessel::layout {

namespace {

constexpr int64 kMaxCells = 65536;

void check_drawable(const std::string& what, int64 rows, int64 cols) {
  if (rows <= 0 || cols <= 0 || rows > kMaxCells || cols > kMaxCells || rows * cols > kMaxCells) {
    user_error(SourceLocation::unknown(), "cannot draw ", what, ": ", rows, "x", cols,
               " cells is more than the limit of ", kMaxCells);
  }
}

template <typename F>
LayoutPicture grid(const std::string& title, const Layout& shape_of, F&& offset_at) {
  if (!shape_of.is_constant()) {
    user_error(SourceLocation::unknown(), "cannot draw the parametric layout ", title,
               "; bind its symbols first (--bind M=128)");
  }
  LayoutPicture p;
  p.title = title;
  int64 size = shape_of.size();
  p.rows = shape_of.rank() == 1 ? 1 : shape_of.mode(0).size();
  p.cols = size / p.rows;
  check_drawable(title, p.rows, p.cols);
  int64 lo = 0, hi = 0;
  for (int64 i = 0; i < size; ++i) {
    int64 x = offset_at(i);
    p.labels.push_back(std::to_string(x));
    p.color_keys.push_back(x);
    lo = i == 0 ? x : std::min(lo, x);
    hi = i == 0 ? x : std::max(hi, x);
  }
  for (int64& k : p.color_keys) k -= lo;  // keys from 0
  p.color_range = hi - lo + 1;
  return p;
}

}  // namespace

LayoutPicture picture(const Layout& layout) {
  return grid(layout.str(), layout, [&](int64 i) { return layout(i); });
}

LayoutPicture picture(const ComposedLayout& layout) {
  LayoutPicture p = grid(layout.str(), layout.layout(), [&](int64 i) { return layout(i); });
  const Swizzle& sw = layout.swizzle();
  if (sw.bits > 0) {
    p.thread_colors = true;
    for (int64 i = 0; i < static_cast<int64>(p.labels.size()); ++i) {
      p.color_keys[i] = (std::stoll(p.labels[i]) >> sw.base) & ((int64(1) << sw.bits) - 1);
    }
    p.color_range = int64(1) << sw.bits;
  }
  return p;
}

LayoutPicture picture(const TVLayout& tv) {
  if (!tv.layout().is_constant() || !tv.tile_shape().is_constant()) {
    user_error(SourceLocation::unknown(), "cannot draw the parametric TV layout ", tv.str(),
               "; bind its symbols first");
  }
  LayoutPicture p;
  p.title = tv.str();
  p.thread_colors = true;
  const IntTuple& tile = tv.tile_shape();
  int64 size = product(tile).constant();
  p.rows = tile.is_leaf() ? size : product(tile[0]).constant();
  p.cols = size / p.rows;
  check_drawable(p.title, p.rows, p.cols);
  if (tv.layout().size() > 4 * kMaxCells) {
    user_error(SourceLocation::unknown(), "cannot draw ", p.title, ": more than ", 4 * kMaxCells,
               " (thread, value) pairs");
  }
  p.labels.assign(size, ".");
  p.color_keys.assign(size, -1);
  std::vector<int> owners(size, 0);
  for (int64 v = 0; v < tv.num_values(); ++v)
    for (int64 t = 0; t < tv.num_threads(); ++t) {
      int64 i = tv.index(t, v);
      if (owners[i]++ == 0) {
        p.labels[i] = "T" + std::to_string(t) + "V" + std::to_string(v);
        p.color_keys[i] = t;
      } else if (owners[i] == 2) {
        p.labels[i] += "+";
      }
    }
  p.color_range = tv.num_threads();
  return p;
}

std::string render_table(const LayoutPicture& p) {
  size_t w = 1;
  for (const std::string& l : p.labels) w = std::max(w, l.size());
  w = std::max(w, std::to_string(p.cols - 1).size());
  size_t rw = std::to_string(p.rows - 1).size();
  std::ostringstream out;
  out << p.title << "\n";
  auto pad = [](const std::string& s, size_t n) {
    return std::string(n - std::min(n, s.size()), ' ') + s;
  };
  out << std::string(rw + 2, ' ');
  for (int64 c = 0; c < p.cols; ++c) out << " " << pad(std::to_string(c), w) << "  ";
  out << "\n";
  std::string rule = std::string(rw + 2, ' ') + "+";
  for (int64 c = 0; c < p.cols; ++c) rule += std::string(w + 2, '-') + "+";
  out << rule << "\n";
  for (int64 r = 0; r < p.rows; ++r) {
    out << pad(std::to_string(r), rw) << "  |";
    for (int64 c = 0; c < p.cols; ++c) out << " " << pad(p.labels[r + p.rows * c], w) << " |";
    out << "\n" << rule << "\n";
  }
  return out.str();
}

namespace {

std::string hsl(double h, double s, double l) {
  std::ostringstream o;
  o << "hsl(" << static_cast<int>(h) % 360 << "," << static_cast<int>(s) << "%,"
    << static_cast<int>(l) << "%)";
  return o.str();
}

std::string color(const LayoutPicture& p, int64 key) {
  if (key < 0) return "#ffffff";
  if (p.thread_colors) {
    // Eight well-separated hues, with the lightness stepping every eight threads, so neighboring
    // threads (the ones a reader compares) always differ in hue.
    static const double hues[8] = {0, 210, 120, 45, 280, 170, 330, 90};
    return hsl(hues[key % 8], 70, 82 - 10 * ((key / 8) % 4));
  }
  double t =
      p.color_range <= 1 ? 0.0 : static_cast<double>(key) / static_cast<double>(p.color_range - 1);
  return hsl(240.0 - 240.0 * t, 65, 78);
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

}  // namespace

std::string render_svg(const LayoutPicture& p) {
  size_t longest = 1;
  for (const std::string& l : p.labels) longest = std::max(longest, l.size());
  const int cw = static_cast<int>(std::max<size_t>(28, 8 * longest + 10)), ch = 24;
  const int left = 36, top = 48;
  const int64 width = left + cw * p.cols + 12, height = top + ch * p.rows + 12;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"monospace\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"4\" y=\"16\" font-size=\"13\">" << escape(p.title) << "</text>\n";
  for (int64 c = 0; c < p.cols; ++c) {
    o << "<text x=\"" << left + cw * c + cw / 2 << "\" y=\"" << top - 8
      << "\" text-anchor=\"middle\" fill=\"#666\">" << c << "</text>\n";
  }
  for (int64 r = 0; r < p.rows; ++r) {
    o << "<text x=\"" << left - 6 << "\" y=\"" << top + ch * r + ch / 2 + 4
      << "\" text-anchor=\"end\" fill=\"#666\">" << r << "</text>\n";
    for (int64 c = 0; c < p.cols; ++c) {
      int64 i = r + p.rows * c;
      int64 x = left + cw * c, y = top + ch * r;
      o << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw << "\" height=\"" << ch
        << "\" fill=\"" << color(p, p.color_keys[i])
        << "\" stroke=\"black\" stroke-width=\"0.75\"/>"
        << "<text x=\"" << x + cw / 2 << "\" y=\"" << y + ch / 2 + 4 << "\" text-anchor=\"middle\">"
        << escape(p.labels[i]) << "</text>\n";
    }
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace tessel::layout
