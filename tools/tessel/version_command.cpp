// `tessel version`: what this build is, and what it can reach on this machine.
#include <iostream>

#include "support/diagnostics.h"
#include "tessel/command.h"

namespace tessel::tool {
namespace {

int run_version(const std::vector<std::string>& args) {
  if (!args.empty()) user_error(SourceLocation::unknown(), "version takes no arguments");
  std::cout << "tessel 0.1 (C++20, target sm_90a)\n";
  return 0;
}

const bool registered = register_command(
    {"version", "print the version", "usage: tessel version\n", &run_version});

}  // namespace
}  // namespace tessel::tool
