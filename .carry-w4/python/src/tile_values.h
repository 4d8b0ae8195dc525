// Internal to the Python tile builder (builder.cpp, tile_values.cpp): the Python handles of tile
// values and the session they share, the Call that locates ops at the Python caller, and the
// conversions between Python objects and tile values that both the value classes (tile_values.cpp:
// Index, Tensor, element types, the free functions) and the Builder class (builder.cpp) use.
#pragma once

#include <nanobind/nanobind.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "caller.h"
#include "tessel/tile.h"

namespace tessel::python::tile_binding {

// What one tile_kernel call shares with every handle it gives out. The TileBuilder lives on the
// C++ stack of tile_kernel; handles reach it through here, and `builder` turns null when the body
// returns or raises, so that a value kept past its kernel is an error instead of a dangling
// pointer.
struct Session {
  TileBuilder* builder = nullptr;
  std::string kernel;
};
using SessionRef = std::shared_ptr<Session>;

struct PyIndex {
  Index index;
  std::string symbol;  // a size's symbol (usable as an extent of a shape), else empty
  SessionRef session;
};
struct PyTensor {
  Tensor tensor;
  SessionRef session;
};

// A UserError unless the session's builder is still open.
void check_open(const Session& session);

// One Python call into the builder: checks that the builder is open and locates the ops the call
// makes at its Python caller, then restores the enclosing call's location (a loop's body has its
// own lines; the loop's yield, made after the body returns, is the loop's).
class Call {
 public:
  explicit Call(SessionRef session) : session_(std::move(session)) {
    check_open(*session_);
    b = session_->builder;
    saved_ = b->location();
    b->set_location(python_caller());
  }
  // The builder outlives every Call: Calls happen inside the body, which tile_kernel runs.
  ~Call() { b->set_location(saved_); }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  const SessionRef& session() const { return session_; }
  TileBuilder* b = nullptr;

 private:
  SessionRef session_;
  std::optional<SourceLocation> saved_;
};

// ---- reading Python values ----

[[noreturn]] void type_error(const std::string& message);
std::string python_type(nanobind::handle h);
bool is_int(nanobind::handle h);
bool is_number(nanobind::handle h);
double number(nanobind::handle h);
bool is_index(nanobind::handle h);
bool is_tensor(nanobind::handle h);
// The session of the first tile value among `values`.
SessionRef session_of(std::initializer_list<nanobind::handle> values, const char* what);
// A UserError unless `s` is the session of the call (values of two kernels mixed).
void check_same(const Call& c, const SessionRef& s);
Index to_index(Call& c, nanobind::handle h, const char* what);
std::optional<ScalarKind> element_of(nanobind::handle h);
// A tensor or scalar operand: a Tensor, an Index (an index scalar), or a Python number when
// `like` gives it an element type (the other operand's, as the C++ operators do).
Tensor to_tensor(Call& c, nanobind::handle h, const char* what,
                 std::optional<ScalarKind> like = std::nullopt);
ScalarKind to_element(nanobind::handle h);
MemorySpace to_space(nanobind::handle h);
std::vector<int64_t> to_ints(nanobind::handle h, const char* what);
// A shape of a global tensor: numbers and sizes.
std::vector<Dim> to_dims(Call& c, nanobind::handle h, const char* what);
std::vector<Coord> to_coords(Call& c, nanobind::handle h);

// ---- making Python values ----

nanobind::object wrap(const Tensor& t, const SessionRef& s);
nanobind::object wrap(const Index& i, const SessionRef& s);
nanobind::object wrap_all(const std::vector<Tensor>& values, const SessionRef& s);
// What a loop or branch body returned: None, one value, or a list or tuple of them.
std::vector<Tensor> body_values(Call& c, nanobind::handle result, const char* what);

// Runs a Python body for the C++ builder. Whatever leaves it by an exception closes the builder:
// the builder's insertion point is then inside a region that will never be finished.
template <typename Run>
std::vector<Tensor> run_body(Call& c, const char* what, Run&& run) {
  try {
    nanobind::object result = run();
    return body_values(c, result, what);
  } catch (...) {
    c.session()->builder = nullptr;
    throw;
  }
}

// Registers the element types and options, Index, Tensor and the free functions (cdiv, exp, ...,
// select) in the submodule `t` (tessel._tessel.tile).
void register_values(nanobind::module_& t);

}  // namespace tessel::python::tile_binding
