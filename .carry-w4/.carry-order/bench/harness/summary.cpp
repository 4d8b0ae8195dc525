#include "bench/harness/summary.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench/harness/sweep.h"
#include "support/command_line.h"
#include "support/diagnostics.h"

namespace tessel::bench {
namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& file, int line)
      : text_(text), file_(file), line_(line) {}

  JsonRecord record() {
    JsonRecord out;
    skip();
    expect('{');
    skip();
    if (peek() == '}') {
      ++at_;
    } else {
      while (true) {
        skip();
        std::string key = string();
        skip();
        expect(':');
        skip();
        out[key] = value();
        skip();
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        break;
      }
    }
    skip();
    if (at_ != text_.size()) fail("text after the object");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    user_error(SourceLocation::at(file_, line_, static_cast<int>(at_) + 1),
               "bench summary: expected a flat JSON object per line: ", what);
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("'") + c + "' missing");
    ++at_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        char e = peek();
        ++at_;
        if (e == 'n')
          out += '\n';
        else if (e == 't')
          out += '\t';
        else if (e == 'u') {
          if (at_ + 4 > text_.size()) fail("a short \\u escape");
          out += static_cast<char>(std::strtol(text_.substr(at_, 4).c_str(), nullptr, 16));
          at_ += 4;
        } else {
          out += e;
        }
      } else {
        out += c;
      }
    }
    expect('"');
    return out;
  }
  JsonField value() {
    JsonField f;
    char c = peek();
    if (c == '"') {
      f.kind = JsonField::Kind::string;
      f.text = string();
    } else if (text_.compare(at_, 4, "true") == 0 || text_.compare(at_, 5, "false") == 0) {
      f.kind = JsonField::Kind::boolean;
      f.boolean = c == 't';
      at_ += f.boolean ? 4 : 5;
    } else if (text_.compare(at_, 4, "null") == 0) {
      at_ += 4;
    } else {
      const char* start = text_.c_str() + at_;
      char* end = nullptr;
      f.number = std::strtod(start, &end);
      if (end == start) fail("a value that is not a string, number, true, false or null");
      f.kind = JsonField::Kind::number;
      at_ += static_cast<size_t>(end - start);
    }
    return f;
  }

  const std::string& text_;
  std::string file_;
  int line_ = 0;
  size_t at_ = 0;
};

bool passed(const JsonRecord& r) {
  auto it = r.find("passed");
  return it != r.end() && it->second.kind == JsonField::Kind::boolean && it->second.boolean;
}

}  // namespace

JsonRecord parse_json_record(const std::string& text, const std::string& file, int line) {
  return Parser(text, file, line).record();
}

double json_number(const JsonRecord& r, const std::string& key) {
  auto it = r.find(key);
  return it != r.end() && it->second.kind == JsonField::Kind::number ? it->second.number : NAN;
}

std::string json_text(const JsonRecord& r, const std::string& key) {
  auto it = r.find(key);
  return it != r.end() && it->second.kind == JsonField::Kind::string ? it->second.text : "";
}

std::string summary_table(const std::vector<JsonRecord>& records) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-18s %-5s %-15s %-13s %9s %14s %-9s %14s %8s\n", "kernel",
                "dtype", "shape", "correct", "ms", "achieved", "baseline", "", "fraction");
  out += line;
  std::string notes;
  for (const JsonRecord& r : records) {
    double ms = json_number(r, "ms");
    if (std::isnan(ms)) {
      // Records that are not a kernel against a baseline: host launch overhead, say.
      std::string name = json_text(r, "name");
      if (name == "launch_overhead") {
        std::string kernel = json_text(r, "kernel");
        std::snprintf(line, sizeof(line), "host launch overhead of a compiled kernel%s%s: %.2f us",
                      kernel.empty() ? "" : " ", kernel.c_str(), json_number(r, "compiled_us"));
        notes += line;
        if (!std::isnan(json_number(r, "raw_us"))) {
          std::snprintf(line, sizeof(line), " (raw cuLaunchKernelEx %.2f us)",
                        json_number(r, "raw_us"));
          notes += line;
        }
        notes += "\n";
      }
      continue;
    }
    bool bandwidth = r.count("gbps") > 0;
    double achieved = bandwidth ? json_number(r, "gbps") : json_number(r, "tflops");
    double base = bandwidth ? json_number(r, "baseline_gbps") : json_number(r, "baseline_tflops");
    double fraction = bandwidth ? json_number(r, "fraction") : json_number(r, "ratio");
    const char* unit = bandwidth ? "GB/s" : "TFLOP/s";
    char correct[32], achieved_text[32], base_text[32];
    std::snprintf(correct, sizeof(correct), "%.1e %s", json_number(r, "rel_err"),
                  passed(r) ? "ok" : "FAIL");
    std::snprintf(achieved_text, sizeof(achieved_text), "%.1f %s", achieved, unit);
    if (std::isnan(base)) {
      std::snprintf(base_text, sizeof(base_text), "-");
    } else {
      std::snprintf(base_text, sizeof(base_text), "%.1f %s", base, unit);
    }
    char fraction_text[16] = "-";
    if (!std::isnan(fraction))
      std::snprintf(fraction_text, sizeof(fraction_text), "%.3f", fraction);
    std::snprintf(line, sizeof(line), "%-18s %-5s %-15s %-13s %9.4f %14s %-9s %14s %8s\n",
                  json_text(r, "name").c_str(), json_text(r, "dtype").c_str(),
                  json_text(r, "shape").c_str(), correct, ms, achieved_text,
                  json_text(r, "baseline").c_str(), base_text, fraction_text);
    out += line;
  }
  return out + notes;
}

int run_summary(const std::vector<std::string>& args) {
  std::string svg;
  std::vector<std::string> files = OptionParser("bench").value("--svg", svg).parse(args);
  if (files.empty()) {
    user_error(SourceLocation::unknown(),
               "bench summary: which files? (JSON lines written by "
               "tessel bench ... --json FILE)");
  }
  std::vector<JsonRecord> records;
  for (const std::string& path : files) {
    std::istringstream in(read_input_file(path));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      records.push_back(parse_json_record(line, path, n));
    }
  }
  std::cout << summary_table(records);
  // A sweep's figures (bench/harness/sweep.h): per kernel, the geometric mean and lowest ratio.
  const std::vector<SweepSeries> series = sweep_series(records);
  std::cout << sweep_text(series);
  if (!svg.empty()) {
    std::ofstream out(svg);
    out << sweep_svg(series);
    if (!out) user_error(SourceLocation::unknown(), "bench summary: cannot write '", svg, "'");
    std::cout << "plot: " << svg << "\n";
  }
  int failed = 0;
  for (const JsonRecord& r : records) {
    if (!std::isnan(json_number(r, "ms")) && !passed(r)) ++failed;
  }
  if (failed) std::cout << failed << " row(s) failed their correctness check\n";
  return failed ? 1 : 0;
}

}  // namespace tessel::bench
