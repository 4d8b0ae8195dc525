// The pass registry: named transformations of a module that `tessel opt --passes=a,b` can run.
//
// The IR layer registers its own passes (verify, canonicalize) the first time the registry is
// used; higher layers add theirs with register_pass before the tool looks them up. A pass throws a
// UserError for bad input; run_passes verifies after every pass, so that a pass that breaks the IR
// is caught at once and named.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel::ir {

struct Pass {
  std::string name;
  std::string summary;
  std::function<void(Module&)> run;
};

void register_pass(Pass pass);
const std::vector<Pass>& registered_passes();
const Pass* find_pass(const std::string& name);

// Runs the named passes in order, verifying after each. With print_after_all, writes
// "// -----// IR after NAME //----- //" and the module after each pass to `out`.
void run_passes(Module& module, const std::vector<std::string>& names, bool print_after_all = false,
                std::ostream* out = nullptr);

// As run_passes, and when `timing` is given, writes one line per pass to it:
// "pass NAME: 0.123 ms (verify 0.045 ms)".
void run_passes_timed(Module& module, const std::vector<std::string>& names, bool print_after_all,
                      std::ostream* out, std::ostream* timing);

}  // namespace tessel::ir
