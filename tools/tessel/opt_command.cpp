// `tessel opt FILE [--passes=a,b] [--print-after-all]`: reads tile IR text, verifies it, runs named
// passes, and prints the result.
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/parser.h"
#include "ir/pass.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "support/diagnostics.h"
#include "tessel/command.h"
#include "transforms/report.h"

namespace tessel::tool {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string read_file(const std::string& path) {
  if (path == "-") {
    std::stringstream buffer;
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::ifstream in(path);
  if (!in) user_error(SourceLocation::unknown(), "cannot open '", path, "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int run_opt(const std::vector<std::string>& args) {
  std::string file;
  std::vector<std::string> passes;
  bool print_after_all = false;
  bool time_passes = false;
  bool check = false;
  std::vector<std::string> reports;
  transforms::register_passes();
  for (const std::string& arg : args) {
    if (arg.rfind("--passes=", 0) == 0) {
      passes = split(arg.substr(9), ',');
    } else if (arg == "--print-after-all") {
      print_after_all = true;
    } else if (arg.rfind("--report=", 0) == 0) {
      for (const std::string& kind : split(arg.substr(9), ',')) {
        transforms::enable_report(kind);
        reports.push_back(kind);
      }
    } else if (arg == "--time-passes") {
      time_passes = true;
    } else if (arg == "--pipeline") {
      passes = pipeline::lowering_passes();  // the passes `tessel compile` runs, in order
    } else if (arg == "--check-protocol") {
      check = true;  // the barrier protocol check after the passes (check_protocol.h)
    } else if (arg == "--list-passes") {
      for (const ir::Pass& pass : ir::registered_passes()) {
        std::cout << "  " << pass.name << "  " << pass.summary << "\n";
      }
      return 0;
    } else if (arg.rfind("--", 0) == 0) {
      user_error(SourceLocation::unknown(), "unknown option '", arg, "' (see `tessel help opt`)");
    } else if (file.empty()) {
      file = arg;
    } else {
      user_error(SourceLocation::unknown(), "opt takes one input file, got '", file, "' and '", arg,
                 "'");
    }
  }
  if (file.empty())
    user_error(SourceLocation::unknown(), "opt needs an input file (or - for stdin)");
  if (check) passes.push_back("check-protocol");
  auto module = ir::parse_module(read_file(file), file);
  ir::verify(*module);
  ir::run_passes_timed(*module, passes, print_after_all, &std::cout,
                       time_passes ? &std::cerr : nullptr);
  if (!print_after_all) std::cout << ir::print(*module);
  for (const std::string& kind : reports) {
    std::cout << "// -----// report " << kind << " //----- //\n";
    for (const std::string& line : transforms::take_report(kind)) std::cout << "// " << line << "\n";
  }
  return 0;
}

const bool registered = register_command(
    {"opt", "parse tile IR, run passes on it, print it",
     "usage: tessel opt FILE [--passes=a,b,...] [--print-after-all] [--time-passes] "
     "[--list-passes] [--report=search,banks,pipeline,epilogue] [--check-protocol] [--pipeline]\n"
     "  Reads tile IR text (FILE, or - for stdin), verifies it, runs the named passes in order\n"
     "  (verifying after each), and prints the result. --print-after-all prints the IR after "
     "every\n"
     "  pass instead of once at the end; --time-passes writes each pass's time to stderr;\n"
     "  --report=search,banks prints the figures behind the layout passes' choices (the\n"
     "  instruction-selection search, each shared access's bank-conflict wavefronts);\n"
     "  --report=pipeline,epilogue: each ring's depth, and where warp-specialize put each\n"
     "  epilogue operand load (the producer's TMA, or the consumer, and why);\n"
     "  --pipeline runs the default pipeline (what `tessel compile` runs; with --print-after-all\n"
     "  it shows the roles, rings, barriers and parities appearing pass by pass);\n"
     "  --check-protocol checks the barrier protocol after the passes (a bounded model check of\n"
     "  every wait, arrive, parity and ring slot; see check-protocol in --list-passes).\n",
     &run_opt});

}  // namespace
}  // namespace tessel::tool
