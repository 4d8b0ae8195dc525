// The subcommand table of the `tessel` tool: each <name>_command.cpp registers one entry.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tessel::tool {

// A subcommand receives its arguments (without the tool and command names) and returns the exit
// status. It reports bad input by throwing tessel::UserError; main() prints it and exits 1.
using CommandFunction = std::function<int(const std::vector<std::string>& args)>;

struct Command {
  std::string name;
  std::string summary;  // one line for `tessel --help`
  std::string usage;    // printed by `tessel help NAME` and on usage errors
  CommandFunction run;
};

// Registers a command at static-initialization time:
//   static const bool registered = register_command({"layout", "...", "...", &run_layout});
bool register_command(Command command);
const std::vector<Command>& commands();

}  // namespace tessel::tool
