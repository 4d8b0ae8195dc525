// What a shape sweep says (issue 11's bar: the geometric mean of the ratios to cuBLAS over the
// sweep, and its lowest point), as text and as an SVG plot of ratio against shape, from the JSON
// records of `tessel bench gemm --json` (bench summary's parser). `tessel bench summary FILES
// --svg OUT` writes the plot; the summary prints the per-kernel figures under its table.
#pragma once

#include <string>
#include <vector>

#include "bench/harness/summary.h"

namespace tessel::bench {

// One kernel and element type over the records that carry a ratio and a shape MxNxK.
struct SweepSeries {
  std::string kernel, dtype;
  struct Point {
    std::string shape;
    double flops = 0;  // 2 M N K: the plot's x, on a log scale
    double ratio = 0;
  };
  std::vector<Point> points;  // in record order
  double geometric_mean() const;
  const Point* lowest() const;
  int below(double bar) const;  // points under `bar`
};

// The series in order of first appearance; records without a positive ratio or an MxNxK shape
// (memory-bound rows, launch overhead) are left out.
std::vector<SweepSeries> sweep_series(const std::vector<JsonRecord>& records);

// "gemm f16: 32 shapes, geometric mean 0.735, lowest 0.290 (16x4096x4096), 13 under 0.85" per
// series, or "" when no record has a ratio.
std::string sweep_text(const std::vector<SweepSeries>& series);

// A self-contained SVG: ratio (y, linear, with lines at 1.0 and at the 0.85) against
// 2MNK (x, log scale), one colour per series, each point's shape in its tooltip.
std::string sweep_svg(const std::vector<SweepSeries>& series);

}  // namespace tessel::bench
