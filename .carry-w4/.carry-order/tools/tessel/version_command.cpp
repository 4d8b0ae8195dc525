// `tessel version`: what this build is, and whether it can reach a GPU on this machine.
#include <iostream>

#include "runtime/compiler.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"

namespace tessel::tool {
namespace {

int run_version(const std::vector<std::string>& args) {
  if (!OptionParser("version").parse(args).empty()) {
    user_error(SourceLocation::unknown(), "version takes no arguments");
  }
  std::cout << "tessel 0.1 (C++20, target sm_90a, NVRTC " << runtime::nvrtc_version() << ")\n";
  std::string reason;
  if (runtime::gpu_available(&reason)) {
    const runtime::Context& gpu = runtime::context();
    std::cout << "gpu: " << gpu.device_name() << " (sm_" << gpu.compute_capability() << ", "
              << gpu.sm_count() << " SMs)\n";
  } else {
    std::cout << "gpu: none (" << reason << ")\n";
  }
  return 0;
}

const bool registered = register_command(
    {"version", "print the version and the GPU this machine offers",
     "usage: tessel version\n\nPrints tessel's version, the NVRTC version, and the GPU tessel would "
     "use (or why there is none).\n",
     &run_version});

}  // namespace
}  // namespace tessel::tool
