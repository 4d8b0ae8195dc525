#include "support/command_line.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "support/diagnostics.h"

namespace tessel {
namespace {

bool looks_like_option(std::string_view arg) {
  return arg.size() >= 2 && arg[0] == '-' &&
         (arg[1] == '-' || std::isalpha(static_cast<unsigned char>(arg[1])));
}

std::vector<std::string> split_names(std::string_view names) {
  std::vector<std::string> out;
  std::istringstream in{std::string(names)};
  for (std::string name; in >> name;) out.push_back(name);
  return out;
}

}  // namespace

OptionParser::OptionParser(std::string command) : command_(std::move(command)) {}

OptionParser& OptionParser::add(
    std::string_view names, bool takes_value,
    std::function<void(const std::string& name, const std::string& value)> take) {
  options_.push_back({split_names(names), takes_value, std::move(take)});
  return *this;
}

OptionParser& OptionParser::flag(std::string_view names, bool& target) {
  return add(names, false, [&target](const std::string&, const std::string&) { target = true; });
}

OptionParser& OptionParser::value(std::string_view names, std::string& target) {
  return add(names, true,
             [&target](const std::string&, const std::string& value) { target = value; });
}

OptionParser& OptionParser::value(std::string_view names,
                                  std::function<void(const std::string&)> take) {
  return add(names, true, [take = std::move(take)](const std::string&, const std::string& value) {
    take(value);
  });
}

OptionParser& OptionParser::integer_option(std::string_view names, int64_t minimum, int64_t maximum,
                                           std::function<void(int64_t)> take) {
  return add(
      names, true,
      [minimum, maximum, take = std::move(take)](const std::string& name,
                                                 const std::string& value) {
        int64_t parsed = 0;
        auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        bool is_number = !value.empty() && error != std::errc::invalid_argument &&
                         end == value.data() + value.size();
        bool out_of_range = error == std::errc::result_out_of_range;
        if (!is_number || (out_of_range ? value[0] == '-' : parsed < minimum)) {
          std::string wanted = minimum == 1   ? "a positive integer"
                               : minimum == 0 ? "a non-negative integer"
                                              : "an integer of at least " + std::to_string(minimum);
          user_error(SourceLocation::unknown(), name, " expects ", wanted, ", got '", value, "'");
        }
        if (out_of_range || parsed > maximum) {
          user_error(SourceLocation::unknown(), name, " expects at most ", maximum, ", got '",
                     value, "'");
        }
        take(parsed);
      });
}

OptionParser& OptionParser::list(std::string_view names, std::vector<std::string>& target) {
  return add(names, true, [&target](const std::string&, const std::string& value) {
    target = split_list(value);
  });
}

const OptionParser::Option* OptionParser::find(std::string_view name) const {
  for (const Option& option : options_) {
    for (const std::string& spelling : option.names) {
      if (spelling == name) return &option;
    }
  }
  return nullptr;
}

std::vector<std::string> OptionParser::parse(const std::vector<std::string>& args) const {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!looks_like_option(arg)) {
      positional.push_back(arg);
      continue;
    }
    // Only long options carry their value after '=': "-o=x" would name the file "=x".
    size_t eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
    std::string name = arg.substr(0, eq);
    const Option* option = find(name);
    if (option == nullptr) {
      user_error(SourceLocation::unknown(), "unknown option '", name, "' (see `tessel help ",
                 command_, "`)");
    }
    if (!option->takes_value) {
      if (eq != std::string::npos) user_error(SourceLocation::unknown(), name, " takes no value");
      option->take(name, "");
    } else if (eq != std::string::npos) {
      option->take(name, arg.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      option->take(name, args[++i]);
    } else {
      user_error(SourceLocation::unknown(), name, " needs a value");
    }
  }
  return positional;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= text.size();) {
    size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::string single_input_file(const std::vector<std::string>& positional,
                              std::string_view command) {
  if (positional.empty()) {
    user_error(SourceLocation::unknown(), command, " needs an input file (or - for stdin)");
  }
  if (positional.size() > 1) {
    user_error(SourceLocation::unknown(), command, " takes one input file, got '", positional[0],
               "' and '", positional[1], "'");
  }
  return positional[0];
}

std::string read_input_file(const std::string& path) {
  std::stringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::error_code error;
  std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) {
    user_error(SourceLocation::unknown(), "cannot read '", path, "': no such file");
  }
  if (std::filesystem::is_directory(status)) {
    user_error(SourceLocation::unknown(), "cannot read '", path, "': it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error(SourceLocation::unknown(), "cannot read '", path, "'");
  buffer << in.rdbuf();
  return buffer.str();
}

void parse_sizes(std::string_view text, std::map<std::string, int64_t>& sizes,
                 std::string_view option) {
  for (const std::string& item : split_list(text)) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      user_error(SourceLocation::unknown(),
                 option, " expects NAME=VALUE pairs separated by commas, got '", item, "'");
    }
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0') {
      user_error(SourceLocation::unknown(), option, ": '", value, "' is not an integer (for ",
                 name, ")");
    }
    sizes[name] = v;
  }
}

}  // namespace tessel
