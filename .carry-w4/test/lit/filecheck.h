// A small FileCheck: checks a program's output against CHECK lines written in a test file.
//
// Directives (PREFIX is CHECK unless told otherwise), each on a line of the check file, usually in
// a
// `//` comment:
//   PREFIX: pat        pat occurs after the previous match (on the same line or later)
//   PREFIX-NEXT: pat   pat occurs on the line right after the previous match's line
//   PREFIX-SAME: pat   pat occurs on the previous match's line, after it
//   PREFIX-NOT: pat    pat does not occur between the previous match and the next one (or the end)
//   PREFIX-LABEL: pat  splits the output first: labels are found in order, and the other
//                      directives between two labels only look between those two matches
// A pattern is literal text with `{{regex}}` parts (ECMAScript regex); leading and trailing blanks
// are ignored and any run of blanks matches any run of blanks.
#pragma once

#include <string>
#include <string_view>

namespace tessel::lit {

struct CheckResult {
  bool ok = true;
  std::string message;  // why it failed: the directive, its line, and where the search started
};

// Checks `output` against the directives with `prefix` in `check_text` (named `check_file` in
// messages). A check file without any directive for the prefix fails (a test that cannot fail is
// no test).
CheckResult file_check(std::string_view check_text, const std::string& check_file,
                       std::string_view output, const std::string& prefix = "CHECK");

}  // namespace tessel::lit
