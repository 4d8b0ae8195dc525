// Where a Python call comes from: the file, line and column of the innermost frame outside the
// tessel package. The Python builder (builder.cpp) locates every op it makes there, so that the
// verifier's errors point at the user's script, as the C++ tile language points at its caller.
#pragma once

#include <string>

#include "support/diagnostics.h"

namespace tessel::python {

// The tessel package's folder (tessel/__init__.py sets it at import): frames of files in it are
// tessel's own sugar, skipped when looking for the caller.
void set_package_dir(std::string dir);

// The innermost Python frame outside the package; unknown when there is none (a call from C++).
// Columns are 1-based, of the expression's first character (Python 3.11 and later; 0 before).
SourceLocation python_caller();

}  // namespace tessel::python
