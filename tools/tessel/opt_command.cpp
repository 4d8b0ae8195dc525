// `tessel opt FILE [--passes=a,b] [--print-after-all]`: reads tile IR text, verifies it, runs named
// passes, and prints the result.
#include <iostream>
#include <map>

#include "ir/parser.h"
#include "ir/pass.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"
#include "transforms/layout/schedule_rows.h"
#include "transforms/report.h"

namespace tessel::tool {
namespace {

int run_opt(const std::vector<std::string>& args) {
  std::vector<std::string> passes, reports;
  bool print_after_all = false, time_passes = false, check = false, pipeline = false;
  bool list_passes = false;
  std::map<std::string, int64_t> hints;
  std::vector<std::string> positional =
      OptionParser("opt")
          .list("--passes", passes)
          .flag("--print-after-all", print_after_all)
          .value("--report",
                 [&](const std::string& kinds) {
                   for (const std::string& kind : split_list(kinds)) reports.push_back(kind);
                 })
          .flag("--time-passes", time_passes)
          .flag("--pipeline", pipeline)
          .value("--size-hint", [&](const std::string& text) { parse_sizes(text, hints, "--size-hint"); })
          .flag("--check-protocol", check)
          .flag("--list-passes", list_passes)
          .parse(args);
  transforms::register_passes();
  if (list_passes) {
    for (const ir::Pass& pass : ir::registered_passes()) {
      std::cout << "  " << pass.name << "  " << pass.summary << "\n";
    }
    return 0;
  }
  std::string file = single_input_file(positional, "opt");
  if (pipeline) {
    if (!passes.empty()) {
      user_error(SourceLocation::unknown(), "give --passes or --pipeline, not both");
    }
    passes = pipeline::lowering_passes();  // the passes `tessel compile` runs, in order
  }
  for (const std::string& kind : reports) transforms::enable_report(kind);
  if (check) passes.push_back("check-protocol");
  auto module = ir::parse_module(read_input_file(file), file);
  transforms::check_size_hints(*module, hints);
  for (const auto& kernel : module->kernels) transforms::set_size_hints(*kernel, hints);
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
     "[--list-passes] [--report=search,banks,pipeline,epilogue,pingpong] [--check-protocol] [--pipeline]\n"
     "  [--size-hint M=8192,N=1024]\n"
     "  Reads tile IR text (FILE, or - for stdin), verifies it, runs the named passes in order\n"
     "  (verifying after each), and prints the result. --print-after-all prints the IR after "
     "every\n"
     "  pass instead of once at the end; --time-passes writes each pass's time to stderr;\n"
     "  --report=search,banks prints the figures behind the layout passes' choices (the\n"
     "  instruction-selection search, each shared access's bank-conflict wavefronts);\n"
     "  --report=pipeline,epilogue: each ring's depth, and where warp-specialize put each\n"
     "  epilogue operand load (the producer's TMA, or the consumer, and why); --report=pingpong:\n"
     "  the loops whose warpgroups take turns at the tensor cores;\n"
     "  --size-hint: the sizes schedule-rows tunes a row program for (the kernel stays correct\n"
     "  for any size);\n"
     "  --pipeline runs the default pipeline (what `tessel compile` runs; with --print-after-all\n"
     "  it shows the roles, rings, barriers and parities appearing pass by pass);\n"
     "  --check-protocol checks the barrier protocol after the passes (a bounded model check of\n"
     "  every wait, arrive, parity and ring slot; see check-protocol in --list-passes).\n",
     &run_opt});

}  // namespace
}  // namespace tessel::tool
