// `tessel bench summary`: JSON records of several suites in one table, without a GPU.
#include "bench/harness/summary.h"

#include <gtest/gtest.h>

#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

// As the memory-bound suite, the GEMM suites (report.h) and the launch-overhead line write them.
const char* kMemory =
    R"({"name":"rmsnorm_n8192","dtype":"f16","shape":"8192x8192","ms":0.0871,"gbps":3082.5,)"
    R"("baseline":"copy16","baseline_ms":0.0913,"baseline_gbps":2940.1,"fraction":1.048,)"
    R"("rel_err":3.1e-4,"passed":true,"date":"d","device":"H100","commit":"c","command":"x"})";
const char* kGemm =
    R"({"name": "gemm_bf16", "dtype": "bf16", "shape": "8192x8192x4096", "ms": 0.9, )"
    R"("tflops": 610.9, "baseline": "cublas", "baseline_ms": 0.81, "baseline_tflops": 678.6, )"
    R"("ratio": 0.9, "rel_err": 0.0041, "rel_err_vs_baseline": null, "passed": false, )"
    R"("epilogue": "A \"quoted\" \u0041", "date": "d"})";
const char* kOverhead = R"({"name":"launch_overhead","compiled_us":4.4,"raw_us":2.1})";
const char* kGemmOverhead = R"({"name": "launch_overhead", "kernel": "gemm", "compiled_us": 6.25})";

TEST(BenchSummary, ParsesFlatRecords) {
  JsonRecord r = parse_json_record(kGemm, "f.jsonl", 2);
  EXPECT_EQ(r.at("name").text, "gemm_bf16");
  EXPECT_EQ(r.at("tflops").number, 610.9);
  EXPECT_EQ(r.at("rel_err_vs_baseline").kind, JsonField::Kind::null);
  EXPECT_FALSE(r.at("passed").boolean);
  EXPECT_EQ(r.at("passed").kind, JsonField::Kind::boolean);
  EXPECT_EQ(r.at("epilogue").text, "A \"quoted\" A");
}

TEST(BenchSummary, OneTableForBothKindsOfRecords) {
  std::string table = summary_table(
      {parse_json_record(kMemory, "m", 1), parse_json_record(kGemm, "g", 1),
       parse_json_record(kOverhead, "m", 2), parse_json_record(kGemmOverhead, "g", 2)});
  EXPECT_NE(table.find("kernel"), std::string::npos);
  EXPECT_NE(table.find("rmsnorm_n8192      f16   8192x8192       3.1e-04 ok"), std::string::npos)
      << table;
  EXPECT_NE(table.find("0.0871    3082.5 GB/s copy16       2940.1 GB/s    1.048"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("4.1e-03 FAIL"), std::string::npos) << table;
  EXPECT_NE(table.find("0.9000  610.9 TFLOP/s cublas     678.6 TFLOP/s    0.900"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("host launch overhead of a compiled kernel: 4.40 us (raw cuLaunchKernelEx "
                       "2.10 us)\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("host launch overhead of a compiled kernel gemm: 6.25 us\n"),
            std::string::npos)
      << table;
}

TEST(BenchSummary, BadLinesNameFileLineAndColumn) {
  for (const char* bad : {"{\"a\": 1,}", "[1]", "{\"a\" 1}", "{\"a\": nope}", "{\"a\": 1} x"}) {
    try {
      parse_json_record(bad, "runs.jsonl", 7);
      FAIL() << "accepted " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("bench summary: expected a flat JSON object per line"),
                std::string::npos)
          << e.what();
      EXPECT_EQ(e.location().file, "runs.jsonl");
      EXPECT_EQ(e.location().line, 7);
      EXPECT_GE(e.location().column, 1);
    }
  }
  try {
    parse_json_record("{\"a\": 1,}", "runs.jsonl", 7);
  } catch (const UserError& e) {
    EXPECT_EQ(e.location().column, 9);  // where a key should start
  }
}

}  // namespace
}  // namespace tessel::bench
