// `tessel task [NAME]`: the task programs of examples/tasks/ (Cypress), compiled under a mapping
// (the default .tmap next to the program, or --mapping FILE): printed as tile IR (to pipe into
// `tessel run - --interpret` or `tessel compile -`), as event IR after each stage of the task
// compiler, run in the task interpreter, or checked against the tile interpreter.
#include <fstream>
#include <iostream>
#include <sstream>

#include "frontend/task/instantiate.h"
#include "frontend/task/task_interpreter.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tasks/programs.h"
#include "tessel/command.h"
#include "transforms/task/task_check.h"
#include "transforms/task/task_pipeline.h"

namespace tessel::tool {
namespace {

int run_task(const std::vector<std::string>& args) {
  std::string mapping_file, emit = "tile", stop_after, dtype = "f16";
  bool print_after_all = false, interpret = false, check = false;
  std::map<std::string, int64_t> sizes;
  int64_t seed = 1;
  double tolerance = 1e-2;
  std::vector<std::string> names =
      OptionParser("task")
          .value("--mapping", mapping_file)
          .value("--emit", emit)
          .value("--stop-after", stop_after)
          .value("--dtype", dtype)
          .flag("--print-after-all", print_after_all)
          .flag("--interpret", interpret)
          .flag("--check", check)
          .value("--size", [&](const std::string& text) { parse_sizes(text, sizes); })
          .value("--seed", [&](const std::string& text) { seed = std::stoll(text); })
          .parse(args);
  const auto& table = examples::task_examples();
  if (names.empty()) {
    for (const auto& e : table) std::cout << e.name << ": " << e.what << "\n";
    return 0;
  }
  if (names.size() > 1)
    user_error(SourceLocation::unknown(), "task takes one name, got '", names[0], "' and '",
               names[1], "'");
  const examples::TaskExample* example = examples::find_task_example(names[0]);
  if (!example) {
    std::string known;
    for (const auto& e : table) known += (known.empty() ? "" : ", ") + e.name;
    user_error(SourceLocation::unknown(), "no task program '", names[0], "' (the programs: ", known,
               ")");
  }
  ScalarKind element = ScalarKind::f16;
  if (dtype == "bf16") {
    element = ScalarKind::bf16;
  } else if (dtype != "f16") {
    user_error(SourceLocation::unknown(), "--dtype must be f16 or bf16, not '", dtype, "'");
  }
  if (emit != "tile" && emit != "events" && emit != "mapping")
    user_error(SourceLocation::unknown(), "--emit must be tile, events or mapping, not '", emit,
               "'");
  std::string text = example->mapping_text, file = example->mapping_file;
  if (!mapping_file.empty()) {
    text = read_input_file(mapping_file);
    file = mapping_file;
  }
  if (emit == "mapping") {
    std::cout << text;
    return 0;
  }
  try {
    task::TaskProgram program = example->make(element);
    task::Mapping mapping = task::parse_mapping(text, file);
    task::Instantiation inst = task::instantiate(program, mapping);
    if (interpret || check) {
      if (sizes.empty())
        user_error(SourceLocation::unknown(), "--interpret and --check need --size (e.g. ",
                   "--size M=100,N=72,K=40)");
      if (check) {
        TileKernel kernel = transforms::compile_task_program(inst);
        auto r = transforms::check_against_task_interpreter(inst, kernel, sizes, seed);
        double relative = r.max_error / std::max(r.max_reference, 1e-30);
        std::cout << "compared " << r.elements << " elements: max |tile - task| = " << r.max_error
                  << " (" << relative << " of max |task|)";
        if (!r.worst.empty()) std::cout << ", at " << r.worst;
        std::cout << "\n";
        if (relative > tolerance) {
          std::cout << "FAIL: over the tolerance " << tolerance << "\n";
          return 1;
        }
        std::cout << "ok\n";
        return 0;
      }
      std::map<std::string, task::HostArray> data;
      uint64_t state = static_cast<uint64_t>(seed) * 6364136223846793005ULL + 1;
      for (const task::GlobalTensor& g : program.globals()) {
        task::HostArray& a = data[g.name];
        a.element = g.element;
        int64_t count = 1;
        for (const std::string& s : g.shape) {
          a.shape.push_back(task::global_extent(s, sizes));
          count *= a.shape.back();
        }
        for (int64_t i = 0; i < count; ++i) {
          state = state * 6364136223846793005ULL + 1442695040888963407ULL;
          a.data.push_back(
              task::round_element(g.element, double(state >> 11) / double(1ULL << 53) * 2 - 1));
        }
      }
      task::interpret(inst, sizes, data);
      for (const auto& [name, a] : data) {
        double sum = 0, abs_sum = 0;
        for (double v : a.data) {
          sum += v;
          abs_sum += std::abs(v);
        }
        std::cout << name << ": sum " << sum << ", sum of |x| " << abs_sum << "\n";
      }
      return 0;
    }
    transforms::TaskCompileOptions options;
    std::ostringstream stages;
    if (print_after_all) options.print_after_all = &stages;
    options.stop_after = stop_after;
    if (emit == "events" || !stop_after.empty()) {
      task::events::Program p = transforms::compile_task_events(inst, options);
      std::cout << stages.str();
      if (!print_after_all) std::cout << p.print();
      return 0;
    }
    TileKernel kernel = transforms::compile_task_program(inst, options);
    std::cout << stages.str();
    if (!print_after_all) std::cout << kernel.text();
  } catch (const UserError& e) {
    // Mapping mistakes show the mapping's line with a caret.
    if (e.location().file == file) throw with_source_excerpt(e, text);
    throw;
  }
  return 0;
}

const bool registered = register_command(
    {"task", "compile or run a task program of examples/tasks/ (Cypress) under a mapping",
     "usage: tessel task [NAME] [--mapping FILE] [--emit=tile|events|mapping] [--print-after-all]\n"
     "                   [--stop-after=STAGE] [--dtype f16|bf16]\n"
     "       tessel task NAME (--interpret | --check) --size M=..,N=..,K=.. [--seed N]\n\n"
     "Without NAME, lists the task programs (examples/tasks/programs.h). With one, compiles it\n"
     "under its default mapping (the .tmap file next to it; --emit=mapping prints it) or the\n"
     "mapping in FILE, and prints the tile IR it lowers to, to run or compile like a .tir file:\n"
     "  tessel task gemm | tessel run - --interpret --size M=100,N=72,K=40\n"
     "  tessel task gemm | tessel compile - --emit=ptx\n"
     "--emit=events prints the event IR after the task compiler's event stages;\n"
     "--print-after-all prints it after each stage (dependence-analysis, eliminate-copies,\n"
     "vectorize, eliminate-copies-2, allocate-shared) and the tile IR at the end; --stop-after\n"
     "stops after one of them. --interpret runs the task interpreter (the oracle) on random\n"
     "inputs and prints each tensor's sums; --check runs it and the tile interpreter on the\n"
     "compiled kernel with the same inputs and compares every element (exit 1 over 1e-2\n"
     "relative to the largest value).\n",
     &run_task});

}  // namespace
}  // namespace tessel::tool
