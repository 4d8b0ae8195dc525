// A small FileCheck.
#include "filecheck.h"

#include <optional>
#include <regex>
#include <sstream>
#include <vector>

namespace tessel::lit {
namespace {

enum class Kind { plain, next, same, not_, label };

struct Directive {
  Kind kind;
  std::string pattern;
  int line;  // in the check file
  std::regex regex;
};

std::string kind_name(Kind k, const std::string& prefix) {
  switch (k) {
    case Kind::plain:
      return prefix;
    case Kind::next:
      return prefix + "-NEXT";
    case Kind::same:
      return prefix + "-SAME";
    case Kind::not_:
      return prefix + "-NOT";
    case Kind::label:
      return prefix + "-LABEL";
  }
  return prefix;
}

std::string escape(const std::string& literal) {
  static const std::string special = R"(\^$.|?*+()[]{}/)";
  std::string out;
  bool blank = false;
  for (char c : literal) {
    if (c == ' ' || c == '\t') {
      if (!blank) out += "[ \\t]+";
      blank = true;
      continue;
    }
    blank = false;
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

std::regex compile(const std::string& pattern) {
  std::string re;
  size_t pos = 0;
  while (pos < pattern.size()) {
    size_t open = pattern.find("{{", pos);
    if (open == std::string::npos) {
      re += escape(pattern.substr(pos));
      break;
    }
    size_t close = pattern.find("}}", open + 2);
    if (close == std::string::npos) throw std::runtime_error("unclosed {{ in pattern: " + pattern);
    re += escape(pattern.substr(pos, open - pos));
    re += "(?:" + pattern.substr(open + 2, close - open - 2) + ")";
    pos = close + 2;
  }
  return std::regex(re);
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in{std::string(text)};
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// A position in the output: line and column.
struct Pos {
  int line = 0;
  size_t column = 0;
};

// Finds `d` in lines [from, limit) starting at from.column on the first line.
std::optional<std::pair<Pos, Pos>> find(const Directive& d, const std::vector<std::string>& lines,
                                        Pos from, int limit) {
  for (int l = from.line; l < limit; ++l) {
    size_t start = l == from.line ? from.column : 0;
    if (start > lines[l].size()) continue;
    std::smatch m;
    std::string rest = lines[l].substr(start);
    if (std::regex_search(rest, m, d.regex)) {
      Pos b{l, start + static_cast<size_t>(m.position(0))};
      Pos e{l, b.column + static_cast<size_t>(m.length(0))};
      return std::make_pair(b, e);
    }
  }
  return std::nullopt;
}

std::string context(const std::vector<std::string>& lines, Pos from) {
  std::ostringstream out;
  out << "  the search started at output line " << (from.line + 1) << ":\n";
  for (int l = from.line; l < static_cast<int>(lines.size()) && l < from.line + 6; ++l) {
    out << "    | " << lines[l] << "\n";
  }
  if (from.line >= static_cast<int>(lines.size())) out << "    (end of output)\n";
  return out.str();
}

}  // namespace

CheckResult file_check(std::string_view check_text, const std::string& check_file,
                       std::string_view output, const std::string& prefix) {
  std::vector<Directive> directives;
  std::vector<std::string> check_lines = split_lines(check_text);
  const std::vector<std::pair<std::string, Kind>> suffixes = {{"-NEXT:", Kind::next},
                                                              {"-SAME:", Kind::same},
                                                              {"-NOT:", Kind::not_},
                                                              {"-LABEL:", Kind::label},
                                                              {":", Kind::plain}};
  for (size_t i = 0; i < check_lines.size(); ++i) {
    const std::string& line = check_lines[i];
    size_t at = 0;
    while ((at = line.find(prefix, at)) != std::string::npos) {
      bool word_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) ||
                                     line[at - 1] == '-' || line[at - 1] == '_');
      size_t after = at + prefix.size();
      bool matched = false;
      if (word_start) {
        for (const auto& [suffix, kind] : suffixes) {
          if (line.compare(after, suffix.size(), suffix) == 0) {
            std::string pattern = trim(line.substr(after + suffix.size()));
            try {
              directives.push_back({kind, pattern, static_cast<int>(i + 1), compile(pattern)});
            } catch (const std::exception& e) {
              return {false,
                      check_file + ":" + std::to_string(i + 1) + ": bad pattern: " + e.what()};
            }
            matched = true;
            break;
          }
        }
      }
      if (matched) break;
      at = after;
    }
  }
  if (directives.empty()) {
    return {false,
            check_file + ": no " + prefix + " directives: a test that checks nothing cannot fail"};
  }
  std::vector<std::string> lines = split_lines(output);
  int n = static_cast<int>(lines.size());
  auto failure = [&](const Directive& d, const std::string& what, Pos from) {
    return CheckResult{false, check_file + ":" + std::to_string(d.line) +
                                  ": error: " + kind_name(d.kind, prefix) + ": " + what +
                                  "\n  pattern: " + d.pattern + "\n" + context(lines, from)};
  };
  // Labels first: they cut the output into sections.
  std::vector<std::pair<int, int>> label_lines;  // (directive index, output line)
  Pos cursor;
  for (size_t i = 0; i < directives.size(); ++i) {
    if (directives[i].kind != Kind::label) continue;
    auto m = find(directives[i], lines, cursor, n);
    if (!m) return failure(directives[i], "label not found in the output", cursor);
    label_lines.emplace_back(static_cast<int>(i), m->first.line);
    cursor = {m->second.line + 1, 0};
  }
  cursor = Pos{};
  bool have_match = false;
  Pos last_end;
  std::vector<const Directive*> pending_not;
  size_t next_label = 0;
  int limit = label_lines.empty() ? n : label_lines[0].second;
  if (!label_lines.empty() && label_lines[0].first != 0) limit = label_lines[0].second;
  auto check_nots = [&](Pos from, Pos to) -> std::optional<CheckResult> {
    for (const Directive* d : pending_not) {
      for (int l = from.line; l <= to.line && l < n; ++l) {
        size_t b = l == from.line ? from.column : 0;
        size_t e = l == to.line ? to.column : lines[l].size();
        if (b > e || b > lines[l].size()) continue;
        std::string part = lines[l].substr(b, e - b);
        if (std::regex_search(part, d->regex)) {
          return failure(*d, "excluded pattern found at output line " + std::to_string(l + 1),
                         from);
        }
      }
    }
    pending_not.clear();
    return std::nullopt;
  };
  for (size_t i = 0; i < directives.size(); ++i) {
    const Directive& d = directives[i];
    if (d.kind == Kind::label) {
      // Close the section before this label, then jump to the label's match.
      int line = label_lines[next_label].second;
      if (auto r = check_nots(cursor, Pos{line, 0})) return *r;
      auto m = find(d, lines, Pos{line, 0}, line + 1);
      cursor = m->second;
      last_end = m->second;
      have_match = true;
      ++next_label;
      limit = next_label < label_lines.size() ? label_lines[next_label].second : n;
      continue;
    }
    if (d.kind == Kind::not_) {
      pending_not.push_back(&d);
      continue;
    }
    std::optional<std::pair<Pos, Pos>> m;
    if (d.kind == Kind::plain) {
      m = find(d, lines, cursor, limit);
      if (!m) return failure(d, "expected pattern not found in the output", cursor);
    } else if (d.kind == Kind::next) {
      if (!have_match) return failure(d, "has no previous match to follow", cursor);
      Pos from{last_end.line + 1, 0};
      m = find(d, lines, from, std::min(limit, from.line + 1));
      if (!m) return failure(d, "expected pattern not found on the next line", from);
    } else {  // same
      if (!have_match) return failure(d, "has no previous match to follow", cursor);
      m = find(d, lines, last_end, last_end.line + 1);
      if (!m) return failure(d, "expected pattern not found on the same line", last_end);
    }
    if (auto r = check_nots(cursor, m->first)) return *r;
    cursor = m->second;
    last_end = m->second;
    have_match = true;
  }
  if (auto r = check_nots(cursor, Pos{n, 0})) return *r;
  return {};
}

}  // namespace tessel::lit
