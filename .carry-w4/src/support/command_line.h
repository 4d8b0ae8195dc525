// Command-line arguments of the `tessel` tool's commands: one option parser, so that every command
// spells its options the same way and refuses the ones it does not know, and one way to read an
// input file.
//
// An option is a flag (`--check`) or takes a value (`--size M=8` or `--size=M=8`); a short spelling
// such as `-o` takes its value as the next argument. Any other argument that starts with '-' and a
// letter or a second '-' is an unknown option, a user error that names it. The rest are positional
// arguments, in order (`-` alone among them: standard input; `-1` too: a layout leaf may be
// negative). `--help` and `-h` never reach a command: the tool prints the command's usage instead.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tessel {

class OptionParser {
 public:
  // `command` is named in messages: "unknown option '--frob' (see `tessel help run`)".
  explicit OptionParser(std::string command);

  // `names` holds one or more spellings separated by spaces: "--output -o".
  OptionParser& flag(std::string_view names, bool& target);
  OptionParser& value(std::string_view names, std::string& target);
  // Called with the value of each occurrence, in order (repeatable options such as --assume).
  OptionParser& value(std::string_view names, std::function<void(const std::string&)> take);
  // A whole decimal number from `minimum` to `maximum`.
  template <typename Int>
  OptionParser& integer(std::string_view names, Int& target, int64_t minimum,
                        int64_t maximum = std::numeric_limits<Int>::max()) {
    static_assert(std::is_signed_v<Int> && sizeof(Int) <= sizeof(int64_t));
    return integer_option(names, minimum, maximum,
                          [&target](int64_t value) { target = static_cast<Int>(value); });
  }
  // A comma-separated list ("--passes a,b"); empty items are dropped; a later occurrence replaces.
  OptionParser& list(std::string_view names, std::vector<std::string>& target);

  // Stores each option's value into its target and returns the positional arguments in order.
  std::vector<std::string> parse(const std::vector<std::string>& args) const;

 private:
  struct Option {
    std::vector<std::string> names;
    bool takes_value = false;
    std::function<void(const std::string& name, const std::string& value)> take;
  };
  OptionParser& integer_option(std::string_view names, int64_t minimum, int64_t maximum,
                               std::function<void(int64_t)> take);
  OptionParser& add(std::string_view names, bool takes_value,
                    std::function<void(const std::string& name, const std::string& value)> take);
  const Option* find(std::string_view name) const;

  std::string command_;
  std::vector<Option> options_;
};

// Items of a comma-separated list, empty ones dropped: "a,,b" -> {a, b}.
std::vector<std::string> split_list(std::string_view text);

// "M=128,N=64" (a --size option's value) into `sizes`; a later value of a name replaces an
// earlier one. A user error, naming `option`, for an item without NAME= or with a value that is
// not an integer.
void parse_sizes(std::string_view text, std::map<std::string, int64_t>& sizes,
                 std::string_view option = "--size");

// The input file of a command that takes exactly one ("run needs an input file", "run takes one
// input file, got 'a' and 'b'").
std::string single_input_file(const std::vector<std::string>& positional, std::string_view command);

// The contents of a text file, or of standard input for "-". A missing file, a directory or an
// unreadable file is a user error that names it.
std::string read_input_file(const std::string& path);

}  // namespace tessel
