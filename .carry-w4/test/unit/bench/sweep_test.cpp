// A sweep's figures and plot (bench/harness/sweep.h) from `tessel bench gemm --json` records.
#include "bench/harness/sweep.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tessel::bench {
namespace {

JsonRecord gemm(const std::string& name, const std::string& shape, double ratio) {
  return parse_json_record(R"({"name": ")" + name + R"(", "dtype": "f16", "shape": ")" + shape +
                               R"(", "ms": 1.0, "ratio": )" + std::to_string(ratio) + "}",
                           "sweep.jsonl", 1);
}

TEST(Sweep, GeometricMeanLowestAndPointsUnderTheBar) {
  std::vector<JsonRecord> records = {
      gemm("gemm", "16x4096x4096", 0.25), gemm("gemm", "4096x4096x4096", 1.0),
      gemm("gemm_nn", "4096x4096x4096", 1.02), gemm("gemm", "8192x8192x8192", 1.0),
      // Not sweep points: a launch-overhead record, a memory-bound row (no MxNxK), no ratio.
      parse_json_record(R"({"name": "launch_overhead", "compiled_us": 2.5})", "s", 2),
      parse_json_record(R"({"name": "rmsnorm", "shape": "8192x8192", "fraction": 1.0})", "s", 3)};
  std::vector<SweepSeries> series = sweep_series(records);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].kernel, "gemm");
  ASSERT_EQ(series[0].points.size(), 3u);
  EXPECT_NEAR(series[0].geometric_mean(), std::cbrt(0.25), 1e-12);
  EXPECT_EQ(series[0].lowest()->shape, "16x4096x4096");
  EXPECT_EQ(series[0].below(0.85), 1);
  EXPECT_DOUBLE_EQ(series[0].points[1].flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_EQ(sweep_text(series),
            "gemm f16: 3 shapes, geometric mean 0.630, lowest 0.250 (16x4096x4096), 1 under 0.85\n"
            "gemm_nn f16: 1 shape, geometric mean 1.020, lowest 1.020 (4096x4096x4096), 0 under "
            "0.85\n");
  EXPECT_EQ(sweep_text({}), "");
}

TEST(Sweep, PlotHasOnePointPerRecordAndTheReferenceLines) {
  std::vector<SweepSeries> series = sweep_series(
      {gemm("gemm<a>", "16x4096x4096", 0.25), gemm("gemm<a>", "8192x8192x8192", 1.03),
       gemm("gemm_nn", "512x512x512", 0.5)});
  std::string svg = sweep_svg(series);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
  // Three points and two legend markers; the kernel name escaped in tooltips and legend.
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, 5u);
  EXPECT_NE(svg.find("<title>gemm&lt;a&gt; 16x4096x4096: 0.250</title>"), std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">1.0 (cuBLAS)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0.85</text>"), std::string::npos);
  // x spans the decades of 2MNK that hold points: 2*512^3 = 2.7e8 to 2*8192^3 = 1.1e12.
  EXPECT_NE(svg.find(">1e8</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1e13</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find(">1e7</text>"), std::string::npos);
  EXPECT_NE(svg.find("(geometric mean 0.507)"), std::string::npos) << svg;
}

}  // namespace
}  // namespace tessel::bench
