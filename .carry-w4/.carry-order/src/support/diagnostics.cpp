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

std::string source_excerpt(std::string_view source, int line, int column) {
  if (line <= 0 || column <= 0) return {};
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    start = source.find('\n', start);
    if (start == std::string_view::npos) return {};
    ++start;
  }
  std::string_view text = source.substr(start, source.find('\n', start) - start);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (text.find_first_not_of(" \t") == std::string_view::npos) return {};
  std::string caret;
  for (size_t i = 0; i + 1 < static_cast<size_t>(column) && i < text.size(); ++i) {
    caret += text[i] == '\t' ? '\t' : ' ';
  }
  return "  " + std::string(text) + "\n  " + caret + "^";
}

UserError with_source_excerpt(const UserError& error, std::string_view source) {
  std::string excerpt = source_excerpt(source, error.location().line, error.location().column);
  if (excerpt.empty()) return error;
  return UserError(error.location(), error.message() + "\n" + excerpt);
}

namespace detail {
void throw_internal(const char* condition, const std::string& message, const char* file, int line) {
  std::string text = std::string("internal error (a tessel bug) at ") + file + ":" +
                     std::to_string(line) + ": assertion `" + condition + "` failed";
  if (!message.empty()) text += ": " + message;
  throw InternalError(text);
}
}  // namespace detail

}  // namespace tessel
