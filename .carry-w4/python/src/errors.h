// How tessel's C++ errors reach Python. A UserError becomes tessel.CompileError (parsing, verifying,
// compiling) or tessel.LaunchError (a call: arguments that do not fit the kernel, a fault the
// interpreter finds, a device error), both carrying file, line, column and message; an
// InternalError becomes tessel.InternalError. Nothing escapes as a crash of the interpreter: every
// C++ exception is translated (nanobind turns any other std::exception into a RuntimeError).
#pragma once

#include <nanobind/nanobind.h>

#include "support/diagnostics.h"

namespace tessel::python {

// A UserError raised while calling a kernel (the translator makes it a tessel.LaunchError).
class LaunchFailure : public UserError {
 public:
  LaunchFailure(SourceLocation location, std::string message)
      : UserError(std::move(location), std::move(message)) {}
};

// Registers the translator. The Python classes are defined in tessel/_errors.py (so that they are
// ordinary Python exceptions with attributes); the package hands them over at import
// (_tessel._set_error_types), before any call can raise.
void register_errors(nanobind::module_& m);

// Runs `body`, turning a UserError into a LaunchFailure (errors of a call, not of a compile).
template <typename Body>
decltype(auto) as_launch_errors(Body&& body) {
  try {
    return body();
  } catch (const LaunchFailure&) {
    throw;
  } catch (const UserError& error) {
    throw LaunchFailure(error.location(), error.message());
  }
}

// A LaunchFailure with no location: for errors found in the arguments, before the kernel is seen.
template <typename... Parts>
[[noreturn]] void launch_error(Parts&&... parts) {
  throw LaunchFailure(SourceLocation::unknown(), detail::concat(std::forward<Parts>(parts)...));
}

}  // namespace tessel::python
