// `tessel opt FILE [--passes=a,b] [--print-after-all]`: reads tile IR text, verifies it, runs named
// passes, and prints the result. A file of event IR (the task compiler's, `tasks @...`) runs the
// task compiler's stages instead (event_ir_opt).
#include <cctype>
#include <iostream>
#include <map>
#include <sstream>

#include "ir/parser.h"
#include "ir/pass.h"
#include "ir/printer.h"
#include "frontend/task/event_parser.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "tasks/programs.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"
#include "transforms/layout/schedule_rows.h"
#include "transforms/report.h"
#include "transforms/task/lower_to_tile.h"
#include "transforms/task/task_pipeline.h"

namespace tessel::tool {
namespace {

// Whether `text` is event IR: its first word, after blanks and `//` comments, is `tasks`.
bool is_event_ir(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[pos]))) {
      ++pos;
    } else if (text.compare(pos, 2, "//") == 0) {
      pos = text.find('\n', pos);
      if (pos == std::string::npos) return false;
    } else {
      break;
    }
  }
  return text.compare(pos, 5, "tasks") == 0;
}

// Event IR: parsed against the task program its header names (examples/tasks/), the named task
// stages run in order (lower-to-tile, which ends the event IR, only last), printed after each
// with --print-after-all, else once at the end (event IR, or tile IR after lower-to-tile).
int event_ir_opt(const std::string& text, const std::string& file,
                 const std::vector<std::string>& passes, bool print_after_all) {
  std::vector<std::unique_ptr<task::TaskProgram>> programs;
  auto program_of = [&](const std::string& name) -> const task::TaskProgram* {
    const examples::TaskExample* e = examples::find_task_example(name);
    if (!e) return nullptr;
    programs.push_back(std::make_unique<task::TaskProgram>(e->make(ir::ScalarKind::f16)));
    return programs.back().get();
  };
  task::events::Program p = task::events::parse_program(text, file, program_of);
  for (size_t i = 0; i < passes.size(); ++i) {
    if (passes[i] == "lower-to-tile") {
      if (i + 1 != passes.size())
        user_error(SourceLocation::unknown(), "lower-to-tile ends the event IR: it must be the ",
                   "last pass, not followed by '", passes[i + 1], "'");
      TileKernel kernel = transforms::lower_to_tile(p);
      if (print_after_all) std::cout << "// -----// tile IR after lower-to-tile //----- //\n";
      std::cout << kernel.text();
      return 0;
    }
    transforms::run_task_stage(p, passes[i]);
    if (print_after_all)
      std::cout << "// -----// event IR after " << passes[i] << " //----- //\n" << p.print();
  }
  if (!print_after_all || passes.empty()) std::cout << p.print();
  return 0;
}

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
  std::string text = read_input_file(file);
  if (is_event_ir(text)) {
    if (pipeline || check || !hints.empty() || time_passes || !reports.empty())
      user_error(SourceLocation::unknown(),
                 "event IR takes --passes and --print-after-all only (the task stages: "
                 "eliminate-copies, vectorize, eliminate-copies-2, allocate-shared, "
                 "lower-to-tile)");
    return event_ir_opt(text, file, passes, print_after_all);
  }
  auto module = ir::parse_module(text, file);
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
     "  every wait, arrive, parity and ring slot; see check-protocol in --list-passes).\n"
     "  Event IR (the task compiler's, `tessel task NAME --emit=events --stop-after=STAGE`) runs\n"
     "  the task stages instead: --passes=eliminate-copies,vectorize,eliminate-copies-2,\n"
     "  allocate-shared[,lower-to-tile], printing event IR (tile IR after lower-to-tile).\n",
     &run_opt});

}  // namespace
}  // namespace tessel::tool
