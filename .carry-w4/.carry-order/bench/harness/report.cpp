#include "bench/harness/report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "runtime/context.h"
#include "support/diagnostics.h"

namespace tessel::bench {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  std::ostringstream out;
  out << std::setprecision(6) << value;
  return out.str();
}

namespace {

std::string git_head() {
  FILE* pipe = popen("git rev-parse HEAD 2>/dev/null", "r");
  if (pipe == nullptr) return "";
  char buffer[64] = {};
  std::string out = fgets(buffer, sizeof(buffer), pipe) != nullptr ? buffer : "";
  pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

Provenance collect_provenance(const std::string& command) {
  Provenance provenance;
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  provenance.date = date;
  provenance.device = runtime::context().device_name();
  const char* commit = std::getenv("TESSEL_COMMIT");
  provenance.commit = commit != nullptr && *commit != '\0' ? commit : git_head();
  if (provenance.commit.empty()) provenance.commit = "unknown";
  provenance.command = command;
  return provenance;
}

void print_table(const std::vector<BenchRecord>& records) {
  std::printf("%-16s %-5s %-16s %9s %8s %-8s %9s %8s %7s %9s %s\n", "kernel", "dtype", "shape",
              "ms", "TFLOP/s", "baseline", "base ms", "TFLOP/s", "ratio", "rel_err", "check");
  for (const BenchRecord& r : records) {
    std::printf("%-16s %-5s %-16s %9.4f %8.1f %-8s %9.4f %8.1f %7.3f %9.2e %s\n", r.name.c_str(),
                r.dtype.c_str(), r.shape.c_str(), r.ms, r.tflops, r.baseline.c_str(), r.baseline_ms,
                r.baseline_tflops, r.ratio, r.rel_err, r.passed ? "ok" : "FAIL");
  }
  std::fflush(stdout);
}

void write_json(const std::string& path, const std::vector<BenchRecord>& records,
                const Provenance& provenance) {
  std::ofstream out(path, std::ios::app);
  if (!out) user_error(SourceLocation::unknown(), "cannot write '", path, "'");
  for (const BenchRecord& r : records) {
    out << "{\"name\": " << json_string(r.name) << ", \"dtype\": " << json_string(r.dtype)
        << ", \"shape\": " << json_string(r.shape) << ", \"ms\": " << json_number(r.ms)
        << ", \"tflops\": " << json_number(r.tflops)
        << ", \"baseline\": " << json_string(r.baseline)
        << ", \"baseline_ms\": " << json_number(r.baseline_ms)
        << ", \"baseline_tflops\": " << json_number(r.baseline_tflops)
        << ", \"ratio\": " << json_number(r.ratio) << ", \"rel_err\": " << json_number(r.rel_err)
        << ", \"rel_err_vs_baseline\": " << json_number(r.rel_err_vs_baseline)
        << ", \"passed\": " << (r.passed ? "true" : "false");
    for (const auto& [key, value] : r.extra) out << ", " << json_string(key) << ": " << value;
    out << ", \"date\": " << json_string(provenance.date)
        << ", \"device\": " << json_string(provenance.device)
        << ", \"commit\": " << json_string(provenance.commit)
        << ", \"command\": " << json_string(provenance.command) << "}\n";
  }
}

}  // namespace tessel::bench
