// `tessel bench summary FILE...`: one table over the JSON records of several suites (memory-bound
// kernels against copy bandwidth, GEMMs against cuBLAS), as the tour prints it last.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tessel::bench {

// One field of a flat JSON object: a string, a number, true/false, or null.
struct JsonField {
  enum class Kind { string, number, boolean, null } kind = Kind::null;
  std::string text;  // string
  double number = 0;
  bool boolean = false;
};
using JsonRecord = std::map<std::string, JsonField>;

// Parses one line holding a flat JSON object (the records report.h and the memory-bound suite
// write). UserError at file:line:column for anything else.
JsonRecord parse_json_record(const std::string& text, const std::string& file, int line);
// A record's number or string field; NaN or "" when it is missing or of another kind.
double json_number(const JsonRecord& r, const std::string& key);
std::string json_text(const JsonRecord& r, const std::string& key);

// The table: kernel, dtype, shape, correctness (rel_err and ok/FAIL), time, achieved GB/s or
// TFLOP/s, the baseline and its figure, and the fraction achieved / baseline. Records without a
// time (e.g. launch overhead) are listed under the table.
std::string summary_table(const std::vector<JsonRecord>& records);

// Runs the subcommand on its file arguments; returns the exit code (1 when a record failed its
// check).
int run_summary(const std::vector<std::string>& args);

}  // namespace tessel::bench
