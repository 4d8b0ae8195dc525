#include "caller.h"

#include <Python.h>
#include <frameobject.h>

namespace tessel::python {
namespace {

std::string package_prefix;  // "<dir>/", empty until set

}  // namespace

void set_package_dir(std::string dir) {
  if (!dir.empty() && dir.back() != '/') dir += '/';
  package_prefix = std::move(dir);
}

SourceLocation python_caller() {
  SourceLocation out;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed; null when no Python code is running
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    if (file == nullptr) PyErr_Clear();
    bool ours = file != nullptr && !package_prefix.empty() &&
                std::string_view(file).substr(0, package_prefix.size()) == package_prefix;
    if (!ours) {
      out.file = file != nullptr ? file : "";
      out.line = PyFrame_GetLineNumber(frame);
#if PY_VERSION_HEX >= 0x030B0000
      // The span of the instruction being executed: for `b.mma(a, w, c)` the whole call, for
      // `x + y` the whole sum (start line and column, 0-based in UTF-8 bytes).
      int line = 0, column = 0, end_line = 0, end_column = 0;
      if (PyCode_Addr2Location(code, PyFrame_GetLasti(frame), &line, &column, &end_line,
                               &end_column) &&
          line > 0 && column >= 0) {
        out.line = line;
        out.column = column + 1;
      }
#endif
      Py_DECREF(code);
      Py_DECREF(frame);
      return out;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  return out;
}

}  // namespace tessel::python
