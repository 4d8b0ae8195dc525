// The pass registry and the pass runner.
#include "ir/pass.h"

#include <chrono>
#include <cstdio>

#include "ir/canonicalize.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace tessel::ir {
namespace {

std::vector<Pass>& table() {
  static std::vector<Pass> passes = {
      {"verify", "check types, shapes, memory spaces and dominance", [](Module& m) { verify(m); }},
      {"canonicalize", "fold constant index arithmetic, simplify identities, remove dead ops",
       [](Module& m) { canonicalize(m); }},
  };
  return passes;
}

}  // namespace

void register_pass(Pass pass) {
  TESSEL_ASSERT(find_pass(pass.name) == nullptr, "pass ", pass.name, " is registered twice");
  table().push_back(std::move(pass));
}

const std::vector<Pass>& registered_passes() {
  return table();
}

const Pass* find_pass(const std::string& name) {
  for (const Pass& pass : table()) {
    if (pass.name == name) return &pass;
  }
  return nullptr;
}

void run_passes(Module& module, const std::vector<std::string>& names, bool print_after_all,
                std::ostream* out) {
  run_passes_timed(module, names, print_after_all, out, nullptr);
}

void run_passes_timed(Module& module, const std::vector<std::string>& names, bool print_after_all,
                      std::ostream* out, std::ostream* timing) {
  std::vector<const Pass*> passes;
  for (const std::string& name : names) {
    const Pass* pass = find_pass(name);
    if (!pass) {
      std::string known;
      for (const Pass& p : table()) known += (known.empty() ? "" : ", ") + p.name;
      user_error(SourceLocation::unknown(), "unknown pass '", name, "' (known passes: ", known,
                 ")");
    }
    passes.push_back(pass);
  }
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  for (const Pass* pass : passes) {
    auto start = Clock::now();
    pass->run(module);
    auto ran = Clock::now();
    verify(module);
    if (timing) {
      char line[160];
      std::snprintf(line, sizeof line, "pass %s: %.3f ms (verify %.3f ms)\n", pass->name.c_str(),
                    ms(ran - start), ms(Clock::now() - ran));
      *timing << line;
    }
    if (print_after_all && out) {
      *out << "// -----// IR after " << pass->name << " //----- //\n" << print(module) << "\n";
    }
  }
}

}  // namespace tessel::ir
