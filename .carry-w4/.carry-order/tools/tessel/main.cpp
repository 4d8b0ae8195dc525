// Entry point of the `tessel` tool: dispatches to a subcommand and turns errors into messages.
//
// Exit status: 0 success, 1 user error (bad input, printed as "where: error: message"), 2 usage
// error, 70 internal error (a tessel bug). No input makes the tool abort.
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "support/diagnostics.h"
#include "tessel/command.h"

namespace tessel::tool {
namespace {

std::vector<Command>& command_table() {
  static std::vector<Command> table;
  return table;
}

void print_help(std::ostream& out) {
  out << "usage: tessel COMMAND [ARGS...]\n\n"
         "tessel compiles tile and task programs into CUDA kernels for NVIDIA Hopper.\n\n"
         "commands:\n";
  std::vector<Command> sorted = commands();
  std::sort(sorted.begin(), sorted.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  for (const Command& command : sorted) {
    out << "  " << command.name << std::string(10 - std::min<size_t>(command.name.size(), 9), ' ')
        << command.summary << "\n";
  }
  out << "\n`tessel COMMAND --help` (or `tessel help COMMAND`) prints a command's usage.\n";
}

const Command* find_command(const std::string& name) {
  for (const Command& command : commands()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

int run_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    print_help(args.empty() ? std::cerr : std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "help") {
    if (args.size() < 2) {
      print_help(std::cout);
      return 0;
    }
    const Command* command = find_command(args[1]);
    if (command == nullptr) {
      std::cerr << "tessel: unknown command '" << args[1] << "'\n";
      return 2;
    }
    std::cout << command->usage;
    return 0;
  }
  const Command* command = find_command(args[0]);
  if (command == nullptr) {
    std::cerr << "tessel: unknown command '" << args[0] << "' (see `tessel --help`)\n";
    return 2;
  }
  args.erase(args.begin());
  // `tessel COMMAND ... --help` is `tessel help COMMAND`, whatever else the line holds.
  if (std::any_of(args.begin(), args.end(),
                  [](const std::string& arg) { return arg == "--help" || arg == "-h"; })) {
    std::cout << command->usage;
    return 0;
  }
  try {
    return command->run(args);
  } catch (const UserError& error) {
    std::cerr << "tessel " << command->name << ": " << error.what() << "\n";
    return 1;
  } catch (const InternalError& error) {
    std::cerr << "tessel " << command->name << ": " << error.what() << "\n";
    return 70;
  } catch (const std::bad_alloc&) {
    std::cerr << "tessel " << command->name << ": out of memory\n";
    return 70;
  } catch (const std::exception& error) {
    std::cerr << "tessel " << command->name << ": internal error (a tessel bug): " << error.what()
              << "\n";
    return 70;
  }
}

}  // namespace

bool register_command(Command command) {
  command_table().push_back(std::move(command));
  return true;
}

const std::vector<Command>& commands() { return command_table(); }

}  // namespace tessel::tool

int main(int argc, char** argv) { return tessel::tool::run_main(argc, argv); }
