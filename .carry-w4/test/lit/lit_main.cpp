// tessel-lit: runs textual tests. A test file holds its own commands and expectations:
//
//   // RUN: tessel opt %s --passes=canonicalize | FileCheck %s
//   // RUN: not tessel opt %s | FileCheck %s --check-prefix=ERR
//   // CHECK: ...
//
// Each RUN line is run by /bin/sh with %s replaced by the test file's path (%S by its folder), the tessel tool's
// folder first on PATH, and stderr merged into stdout. A command must exit 0, or, when it starts
// with `not`, with a user error (status 1 to 69: an internal error or a crash fails the test). When
// the line ends in `| FileCheck %s [--check-prefix=P]`, the output is checked against the file's
// P-directives (filecheck.h). Usage:
//   tessel-lit [--tool-dir DIR] FILE...
//   tessel-lit --filecheck CHECK_FILE [--check-prefix=P] < OUTPUT
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "filecheck.h"

namespace {

std::string read_all(std::istream& in) {
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

// Runs a shell command; returns its exit status (or 128 + signal) and its merged output.
int run_shell(const std::string& command, std::string& output) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return 127;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  int status = pclose(pipe);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

int run_test(const std::string& file, const std::string& tool_dir) {
  std::ifstream in(file);
  if (!in) {
    std::cerr << file << ": cannot open\n";
    return 2;
  }
  std::string text = read_all(in);
  std::istringstream lines(text);
  std::string line;
  int line_number = 0, runs = 0;
  // Each test file gets its own empty kernel cache, so that no result depends on what an earlier
  // run (or another tessel build) left in ~/.cache/tessel.
  std::string cache_dir = (std::filesystem::temp_directory_path() / "tessel-lit-XXXXXX").string();
  if (mkdtemp(cache_dir.data()) == nullptr) {
    std::cerr << file << ": cannot create a temporary cache directory\n";
    return 1;
  }
  setenv("TESSEL_CACHE_DIR", cache_dir.c_str(), 1);
  struct RemoveOnExit {
    std::string dir;
    ~RemoveOnExit() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove_cache{cache_dir};
  static const std::regex filecheck_re(R"(\|\s*FileCheck\s+%s(\s+--check-prefix=(\S+))?\s*$)");
  while (std::getline(lines, line)) {
    ++line_number;
    size_t at = line.find("RUN:");
    if (at == std::string::npos || line.find("//") > at) continue;
    std::string command = line.substr(at + 4);
    ++runs;
    std::string prefix;
    std::smatch m;
    if (std::regex_search(command, m, filecheck_re)) {
      prefix = m[2].matched ? m[2].str() : "CHECK";
      command = command.substr(0, static_cast<size_t>(m.position(0)));
    }
    command = replace_all(command, "%s", "'" + file + "'");
    // %S: the test file's folder, for tests that run passes on another test's input.
    std::string folder = file.substr(0, file.find_last_of('/') == std::string::npos
                                            ? 0
                                            : file.find_last_of('/'));
    command = replace_all(command, "%S", "'" + (folder.empty() ? std::string(".") : folder) + "'");
    size_t first = command.find_first_not_of(" \t");
    bool expect_failure = first != std::string::npos && command.compare(first, 4, "not ") == 0;
    if (expect_failure) command = command.substr(first + 4);
    std::string shell =
        (tool_dir.empty() ? "" : "PATH='" + tool_dir + "':\"$PATH\"; export PATH; ") + "{ " +
        command + " ; } 2>&1";
    std::string output;
    int status = run_shell(shell, output);
    bool status_ok = expect_failure ? (status >= 1 && status <= 69) : status == 0;
    if (!status_ok) {
      std::cerr << file << ":" << line_number << ": RUN line exited with status " << status
                << (expect_failure ? " (expected a user error, status 1..69)" : "")
                << "\n  command: " << command << "\n  output:\n"
                << output;
      return 1;
    }
    if (!prefix.empty()) {
      tessel::lit::CheckResult result = tessel::lit::file_check(text, file, output, prefix);
      if (!result.ok) {
        std::cerr << result.message << "  (RUN line " << line_number << ": " << command << ")\n"
                  << "  full output:\n"
                  << output;
        return 1;
      }
    }
  }
  if (runs == 0) {
    std::cerr << file << ": no RUN lines\n";
    return 1;
  }
  std::cout << file << ": " << runs << " RUN line(s) passed\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--filecheck") {
    if (args.size() < 2) {
      std::cerr << "usage: tessel-lit --filecheck CHECK_FILE [--check-prefix=P] < OUTPUT\n";
      return 2;
    }
    std::string prefix = "CHECK";
    if (args.size() > 2 && args[2].rfind("--check-prefix=", 0) == 0) prefix = args[2].substr(15);
    std::ifstream check(args[1]);
    std::string output = read_all(std::cin);
    auto result = tessel::lit::file_check(read_all(check), args[1], output, prefix);
    if (!result.ok) std::cerr << result.message;
    return result.ok ? 0 : 1;
  }
  std::string tool_dir;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--tool-dir" && i + 1 < args.size()) {
      tool_dir = args[++i];
    } else {
      files.push_back(args[i]);
    }
  }
  if (files.empty()) {
    std::cerr << "usage: tessel-lit [--tool-dir DIR] FILE...\n";
    return 2;
  }
  int failures = 0;
  for (const std::string& file : files) failures += run_test(file, tool_dir) != 0;
  return failures == 0 ? 0 : 1;
}
