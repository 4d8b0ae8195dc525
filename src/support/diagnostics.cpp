#include "support/diagnostics.h"

namespace tessel {

std::string SourceLocation::str() const {
  std::string out = file;
  if (line > 0) {
    out += (out.empty() ? "" : ":") + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  } else if (column > 0) {
    out += (out.empty() ? "column " : ":") + std::to_string(column);
  }
  return out;
}

std::string format_diagnostic(const SourceLocation& location, const std::string& message) {
  std::string where = location.str();
  return where.empty() ? "error: " + message : where + ": error: " + message;
}

UserError::UserError(SourceLocation location, std::string message)
    : std::runtime_error(format_diagnostic(location, message)),
      location_(std::move(location)),
      message_(std::move(message)) {}

namespace detail {
void throw_internal(const char* condition, const std::string& message, const char* file, int line) {
  std::string text = std::string("internal error (a tessel bug) at ") + file + ":" +
                     std::to_string(line) + ": assertion `" + condition + "` failed";
  if (!message.empty()) text += ": " + message;
  throw InternalError(text);
}
}  // namespace detail

}  // namespace tessel
