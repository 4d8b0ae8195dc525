#include "bench/harness/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <tuple>

namespace tessel::bench {
namespace {

std::string format(const char* spec, double x) {
  char text[64];
  std::snprintf(text, sizeof(text), spec, x);
  return text;
}

// Text inside SVG: the five characters XML reserves.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

double SweepSeries::geometric_mean() const {
  if (points.empty()) return NAN;
  double sum = 0;
  for (const Point& p : points) sum += std::log(p.ratio);
  return std::exp(sum / static_cast<double>(points.size()));
}

const SweepSeries::Point* SweepSeries::lowest() const {
  auto it = std::min_element(points.begin(), points.end(),
                             [](const Point& a, const Point& b) { return a.ratio < b.ratio; });
  return it == points.end() ? nullptr : &*it;
}

int SweepSeries::below(double bar) const {
  return static_cast<int>(
      std::count_if(points.begin(), points.end(), [&](const Point& p) { return p.ratio < bar; }));
}

std::vector<SweepSeries> sweep_series(const std::vector<JsonRecord>& records) {
  static const std::regex mnk(R"((\d+)x(\d+)x(\d+))");
  std::vector<SweepSeries> series;
  for (const JsonRecord& r : records) {
    const double ratio = json_number(r, "ratio");
    const std::string shape = json_text(r, "shape");
    std::smatch m;
    if (!(ratio > 0) || !std::regex_match(shape, m, mnk)) continue;
    const std::string kernel = json_text(r, "name"), dtype = json_text(r, "dtype");
    auto it = std::find_if(series.begin(), series.end(), [&](const SweepSeries& s) {
      return s.kernel == kernel && s.dtype == dtype;
    });
    if (it == series.end()) {
      series.push_back({kernel, dtype, {}});
      it = series.end() - 1;
    }
    const double flops = 2.0 * std::stod(m[1]) * std::stod(m[2]) * std::stod(m[3]);
    it->points.push_back({shape, flops, ratio});
  }
  return series;
}

std::string sweep_text(const std::vector<SweepSeries>& series) {
  std::string out;
  for (const SweepSeries& s : series) {
    const SweepSeries::Point* low = s.lowest();
    out += s.kernel + " " + s.dtype + ": " + std::to_string(s.points.size()) + " shape" +
           (s.points.size() == 1 ? "" : "s") + ", geometric mean " +
           format("%.3f", s.geometric_mean()) + ", lowest " + format("%.3f", low->ratio) + " (" +
           low->shape + "), " + std::to_string(s.below(0.85)) + " under 0.85\n";
  }
  return out;
}

std::string sweep_svg(const std::vector<SweepSeries>& series) {
  // Plot area in pixels, and the data ranges: x over the decades of 2MNK that hold points, y from
  // 0 to at least 1.2 (so that the 1.0 line always shows).
  const double left = 70, right = 740, top = 40, bottom = 400, width = 840, height = 440;
  double x_min = INFINITY, x_max = -INFINITY, y_max = 1.2;
  for (const SweepSeries& s : series) {
    for (const auto& p : s.points) {
      x_min = std::min(x_min, std::log10(p.flops));
      x_max = std::max(x_max, std::log10(p.flops));
      y_max = std::max(y_max, p.ratio * 1.05);
    }
  }
  if (!std::isfinite(x_min)) x_min = 9, x_max = 13;
  x_min = std::floor(x_min);
  x_max = std::max(std::ceil(x_max), x_min + 1);
  auto px = [&](double flops) {
    return left + (std::log10(flops) - x_min) / (x_max - x_min) * (right - left);
  };
  auto py = [&](double ratio) { return bottom - ratio / y_max * (bottom - top); };
  static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                  "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + format("%.0f", width) +
                    "\" height=\"" + format("%.0f", height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n"
                    "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                    "<text x=\"" +
                    format("%.0f", left) +
                    "\" y=\"22\" font-size=\"14\">"
                    "tessel / cuBLAS time ratio against problem size (2MNK)</text>\n";
  // Axes, decade ticks and the two reference lines.
  svg += "<line x1=\"" + format("%.1f", left) + "\" y1=\"" + format("%.1f", bottom) + "\" x2=\"" +
         format("%.1f", right) + "\" y2=\"" + format("%.1f", bottom) + "\" stroke=\"black\"/>\n";
  svg += "<line x1=\"" + format("%.1f", left) + "\" y1=\"" + format("%.1f", top) + "\" x2=\"" +
         format("%.1f", left) + "\" y2=\"" + format("%.1f", bottom) + "\" stroke=\"black\"/>\n";
  for (double d = x_min; d <= x_max; d += 1) {
    const double x = px(std::pow(10.0, d));
    svg += "<text x=\"" + format("%.1f", x) + "\" y=\"" + format("%.1f", bottom + 18) +
           "\" text-anchor=\"middle\">1e" + format("%.0f", d) + "</text>\n";
  }
  svg += "<text x=\"" + format("%.1f", (left + right) / 2) + "\" y=\"" +
         format("%.1f", bottom + 36) + "\" text-anchor=\"middle\">2MNK (log scale)</text>\n";
  for (double y = 0; y <= y_max + 1e-9; y += 0.2) {
    svg += "<text x=\"" + format("%.1f", left - 8) + "\" y=\"" + format("%.1f", py(y) + 4) +
           "\" text-anchor=\"end\">" + format("%.1f", y) + "</text>\n";
  }
  for (const auto& [ratio, label, dash] : {std::tuple{1.0, "1.0 (cuBLAS)", ""},
                                           std::tuple{0.85, "0.85", " stroke-dasharray=\"4 3\""}}) {
    svg += "<line x1=\"" + format("%.1f", left) + "\" y1=\"" + format("%.1f", py(ratio)) +
           "\" x2=\"" + format("%.1f", right) + "\" y2=\"" + format("%.1f", py(ratio)) +
           "\" stroke=\"gray\"" + dash + "/>\n<text x=\"" + format("%.1f", right + 4) + "\" y=\"" +
           format("%.1f", py(ratio) + 4) + "\" fill=\"gray\">" + label + "</text>\n";
  }
  // The points, one colour per series, and a legend with each series' geometric mean.
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = colours[i % (sizeof(colours) / sizeof(colours[0]))];
    for (const auto& p : series[i].points) {
      svg += "<circle cx=\"" + format("%.1f", px(p.flops)) + "\" cy=\"" +
             format("%.1f", py(p.ratio)) + "\" r=\"4\" fill=\"" + colour +
             "\" fill-opacity=\"0.75\"><title>" + escape(series[i].kernel) + " " + escape(p.shape) +
             ": " + format("%.3f", p.ratio) + "</title></circle>\n";
    }
    const double ly = top + 16 * static_cast<double>(i);
    svg += "<circle cx=\"" + format("%.1f", left + 16) + "\" cy=\"" + format("%.1f", ly) +
           "\" r=\"4\" fill=\"" + colour + "\"/><text x=\"" + format("%.1f", left + 26) +
           "\" y=\"" + format("%.1f", ly + 4) + "\">" + escape(series[i].kernel) + " " +
           escape(series[i].dtype) + " (geometric mean " +
           format("%.3f", series[i].geometric_mean()) + ")</text>\n";
  }
  return svg + "</svg>\n";
}

}  // namespace tessel::bench
