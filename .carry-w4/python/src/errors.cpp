#include "errors.h"

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tessel::python {
namespace {

// The Python exception classes (tessel/_errors.py); null until the package sets them.
nb::object compile_error_type, launch_error_type, internal_error_type;

// Raises `type(message, file, line, column, text)` where `text` is the formatted diagnostic
// (str(exception)); falls back to RuntimeError when the package did not set the types (the
// extension imported on its own).
void raise(const nb::object& type, const UserError& error) {
  if (!type.is_valid()) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return;
  }
  const SourceLocation& loc = error.location();
  nb::object instance = type(error.message(), loc.file, loc.line, loc.column, error.what());
  PyErr_SetObject(type.ptr(), instance.ptr());
}

void translate(const std::exception_ptr& pointer, void*) {
  try {
    std::rethrow_exception(pointer);
  } catch (const LaunchFailure& error) {
    raise(launch_error_type, error);
  } catch (const UserError& error) {
    raise(compile_error_type, error);
  } catch (const InternalError& error) {
    if (!internal_error_type.is_valid()) {
      PyErr_SetString(PyExc_RuntimeError, error.what());
      return;
    }
    nb::object instance = internal_error_type(error.what());
    PyErr_SetObject(internal_error_type.ptr(), instance.ptr());
  }
}

}  // namespace

void register_errors(nb::module_& m) {
  nb::register_exception_translator(&translate);
  m.def(
      "_set_error_types",
      [](nb::object compile_error, nb::object launch_error, nb::object internal_error) {
        compile_error_type = std::move(compile_error);
        launch_error_type = std::move(launch_error);
        internal_error_type = std::move(internal_error);
      },
      "Sets the exception classes C++ errors become (called once by tessel/__init__.py).");
  // The classes live as long as the interpreter: drop our references before it finalizes.
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] {
    compile_error_type.reset();
    launch_error_type.reset();
    internal_error_type.reset();
  }));
}

}  // namespace tessel::python
