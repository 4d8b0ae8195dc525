// Benchmark records, and how they are shown: a table for people, JSON lines for bench/results/.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessel::bench {

// One measured row: a tessel kernel against a library on the same inputs in the same process.
struct BenchRecord {
  std::string name;   // e.g. "gemm-reference"
  std::string dtype;  // "f16", "bf16"
  std::string shape;  // e.g. "8192x8192x4096" (MxNxK)
  double ms = 0;      // tessel, median of event timings
  double tflops = 0;
  std::string baseline;  // e.g. "cublas"
  double baseline_ms = 0;
  double baseline_tflops = 0;
  double ratio = 0;    // baseline_ms / ms: above 1 means tessel is faster
  double rel_err = 0;  // ‖out − ref‖/‖ref‖ against the float64 reference (sampled entries)
  double rel_err_vs_baseline = 0;  // ‖out − library‖/‖library‖ over every element
  bool passed = false;             // rel_err within the precision's tolerance
  // Further fields of this suite's records, written after the common ones: (name, JSON value).
  std::vector<std::pair<std::string, std::string>> extra;
};

// JSON text of a string and of a number (null when not finite), for BenchRecord::extra.
std::string json_string(const std::string& text);
std::string json_number(double value);

// Where and when a run happened: written with every record.
struct Provenance {
  std::string date;     // UTC, ISO 8601
  std::string device;   // the GPU's name
  std::string commit;   // $TESSEL_COMMIT, else `git rev-parse HEAD`, else "unknown"
  std::string command;  // the command line
};
Provenance collect_provenance(const std::string& command);

void print_table(const std::vector<BenchRecord>& records);
// One JSON object per line; every record also carries the provenance fields.
void write_json(const std::string& path, const std::vector<BenchRecord>& records,
                const Provenance& provenance);

}  // namespace tessel::bench
