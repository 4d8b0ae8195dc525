// Diagnostics: user errors (bad input, reported with a location) versus internal errors (tessel bugs).
//
// A *user error* is anything the person running tessel can fix: a malformed layout expression, a
// composition whose divisibility fails, an IR op with mismatched shapes, a CUDA compile log. It is
// thrown as `UserError`, carries a `SourceLocation` (a column in an expression, a line:column in a
// text file, or the C++ call site of a tile-language call), and the command line prints it as
// `where: error: message` and exits with status 1. It is never an abort.
//
// An *internal error* is a broken invariant inside tessel (`TESSEL_ASSERT`). It is thrown as
// `InternalError` so that tests and the fuzzer can tell it apart from a user error; the command line
// prints it as a bug report and exits with status 70. Neither kind is ever silently swallowed.
#pragma once

#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tessel {

// Where something came from. Any field may be unknown (empty file, zero line/column).
struct SourceLocation {
  std::string file;  // a file name, "<expr>" for a command-line expression, or a C++ source file
  int line = 0;      // 1-based, 0 when unknown
  int column = 0;    // 1-based, 0 when unknown

  static SourceLocation unknown() { return {}; }
  static SourceLocation at(std::string file, int line, int column) {
    return {std::move(file), line, column};
  }
  // The C++ call site of a tile-language call: pass `std::source_location::current()` as a defaulted
  // argument and convert it here.
  static SourceLocation from(const std::source_location& where) {
    return {where.file_name(), static_cast<int>(where.line()), static_cast<int>(where.column())};
  }

  bool is_known() const { return !file.empty() || line > 0 || column > 0; }
  // "file:line:column", omitting unknown parts; empty when nothing is known.
  std::string str() const;
};

// An error the user can fix. `message()` is the bare text; `what()` is the formatted diagnostic.
class UserError : public std::runtime_error {
 public:
  UserError(SourceLocation location, std::string message);
  const SourceLocation& location() const { return location_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation location_;
  std::string message_;
};

// A tessel bug: an invariant that should hold whatever the input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
template <typename... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}
[[noreturn]] void throw_internal(const char* condition, const std::string& message, const char* file,
                                 int line);
}  // namespace detail

// Throws a UserError whose message is the concatenation of `parts` (anything with operator<<).
template <typename... Parts>
[[noreturn]] void user_error(SourceLocation location, Parts&&... parts) {
  throw UserError(std::move(location), detail::concat(std::forward<Parts>(parts)...));
}

// Formats a diagnostic the way the command line prints it: "loc: error: message".
std::string format_diagnostic(const SourceLocation& location, const std::string& message);

// The text a diagnostic shows under its first line: line `line` of `source` and a caret under
// `column`, both indented by two spaces (tabs before the column are kept so that the caret lines
// up). Empty when `source` has no such line or the column is unknown.
//     %x = add %nope, %c0 : index
//              ^
std::string source_excerpt(std::string_view source, int line, int column);

// `error` with the excerpt of `source` at its location appended to its message, on the lines below
// it; `error` unchanged when its location has no excerpt in `source`. For a parser of a whole text
// (an IR file, a layout expression) whose errors the person should see in place.
UserError with_source_excerpt(const UserError& error, std::string_view source);

}  // namespace tessel

// Checks an invariant of tessel itself; on failure throws InternalError naming the condition.
#define TESSEL_ASSERT(condition, ...)                                                        \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      ::tessel::detail::throw_internal(#condition, ::tessel::detail::concat("" __VA_OPT__(, ) \
                                                                                __VA_ARGS__), \
                                       __FILE__, __LINE__);                                  \
    }                                                                                        \
  } while (false)
