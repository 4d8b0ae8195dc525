#include "tile_values.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace tessel::python::tile_binding {

using ir::OpKind;

void check_open(const Session& session) {
  if (session.builder == nullptr) {
    user_error(python_caller(), "the builder of kernel '", session.kernel,
               "' is closed: tile values live only while the kernel's body runs");
  }
}

// ---- reading Python values ----

[[noreturn]] void type_error(const std::string& message) {
  throw nb::type_error(message.c_str());
}

std::string python_type(nb::handle h) {
  return nb::type_name(h.type()).c_str();
}

bool is_int(nb::handle h) {
  return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr());
}
bool is_number(nb::handle h) {
  return is_int(h) || PyFloat_Check(h.ptr());
}
double number(nb::handle h) {
  return PyFloat_AsDouble(h.ptr());
}
bool is_index(nb::handle h) {
  return nb::isinstance<PyIndex>(h);
}
bool is_tensor(nb::handle h) {
  return nb::isinstance<PyTensor>(h);
}

SessionRef session_of(std::initializer_list<nb::handle> values, const char* what) {
  for (nb::handle h : values) {
    if (is_tensor(h)) return nb::cast<PyTensor&>(h).session;
    if (is_index(h)) return nb::cast<PyIndex&>(h).session;
  }
  type_error(std::string(what) + ": needs a tile value (a Tensor or an Index) among its operands");
}

void check_same(const Call& c, const SessionRef& s) {
  if (s != c.session()) {
    user_error(python_caller(), "this op mixes values of kernel '", c.session()->kernel,
               "' and of kernel '", s->kernel, "'");
  }
}

Index to_index(Call& c, nb::handle h, const char* what) {
  if (is_index(h)) {
    auto& i = nb::cast<PyIndex&>(h);
    check_same(c, i.session);
    return i.index;
  }
  if (is_int(h)) return c.b->index(nb::cast<int64_t>(h));
  type_error(std::string(what) + ": expected an Index or an int, got " + python_type(h));
}

std::optional<ScalarKind> element_of(nb::handle h) {
  if (is_tensor(h)) return nb::cast<PyTensor&>(h).tensor.element();
  if (is_index(h)) return ScalarKind::index;
  return std::nullopt;
}

Tensor to_tensor(Call& c, nb::handle h, const char* what, std::optional<ScalarKind> like) {
  if (is_tensor(h)) {
    auto& t = nb::cast<PyTensor&>(h);
    check_same(c, t.session);
    return t.tensor;
  }
  if (is_index(h)) return c.b->as_tensor(to_index(c, h, what));
  if (like && is_number(h)) return c.b->splat(number(h), *like, {});
  type_error(std::string(what) + ": expected a Tensor" + (like ? ", an Index or a number" : "") +
             ", got " + python_type(h));
}

ScalarKind to_element(nb::handle h) {
  ScalarKind kind;
  if (nb::try_cast<ScalarKind>(h, kind)) return kind;
  if (nb::isinstance<nb::str>(h)) {
    std::string text = nb::cast<std::string>(h);
    if (auto parsed = ir::parse_scalar_kind(text)) return *parsed;
    user_error(python_caller(), "unknown element type '", text, "' (f16, bf16, f32, i32, ...)");
  }
  type_error("expected an element type (tessel.tile.f16, ... or a name like 'f16'), got " +
             python_type(h));
}

MemorySpace to_space(nb::handle h) {
  if (h.is_none()) return MemorySpace::reg;
  MemorySpace space;
  if (nb::try_cast<MemorySpace>(h, space)) return space;
  type_error("expected a memory space (Global, Shared, Register), got " + python_type(h));
}

std::vector<int64_t> to_ints(nb::handle h, const char* what) {
  if (is_int(h)) return {nb::cast<int64_t>(h)};
  std::vector<int64_t> out;
  if (nb::try_cast<std::vector<int64_t>>(h, out)) return out;
  type_error(std::string(what) + ": expected a list of ints, got " + python_type(h));
}

std::vector<Dim> to_dims(Call& c, nb::handle h, const char* what) {
  std::vector<Dim> out;
  for (nb::handle item : nb::iter(h)) {
    if (is_int(item)) {
      out.emplace_back(nb::cast<int64_t>(item));
    } else if (is_index(item) && !nb::cast<PyIndex&>(item).symbol.empty()) {
      auto& i = nb::cast<PyIndex&>(item);
      check_same(c, i.session);
      out.emplace_back(Size(c.b, i.index.value(), i.symbol));
    } else {
      user_error(python_caller(), what,
                 ": an extent of a shape is a number or a size (b.size), not ",
                 is_index(item) ? "an index computed from them" : python_type(item));
    }
  }
  return out;
}

std::vector<Coord> to_coords(Call& c, nb::handle h) {
  std::vector<Coord> out;
  for (nb::handle item : nb::iter(h)) {
    if (is_int(item)) {
      out.emplace_back(nb::cast<int64_t>(item));
    } else {
      out.emplace_back(to_index(c, item, "tile"));
    }
  }
  return out;
}

// ---- making Python values ----

nb::object wrap(const Tensor& t, const SessionRef& s) {
  return nb::cast(PyTensor{t, s});
}
nb::object wrap(const Index& i, const SessionRef& s) {
  return nb::cast(PyIndex{i, "", s});
}
nb::object wrap_all(const std::vector<Tensor>& values, const SessionRef& s) {
  nb::list out;
  for (const Tensor& t : values) out.append(wrap(t, s));
  return out;
}

std::vector<Tensor> body_values(Call& c, nb::handle result, const char* what) {
  std::vector<Tensor> out;
  if (result.is_none()) return out;
  if (is_tensor(result) || is_index(result)) {
    out.push_back(to_tensor(c, result, what));
    return out;
  }
  if (!nb::isinstance<nb::list>(result) && !nb::isinstance<nb::tuple>(result)) {
    type_error(std::string(what) + ": a body returns None, a Tensor, or a list of Tensors, not " +
               python_type(result));
  }
  for (nb::handle item : nb::iter(result)) out.push_back(to_tensor(c, item, what));
  return out;
}

namespace {

// ---- operators ----

nb::object not_implemented() {
  return nb::borrow(Py_NotImplemented);
}

bool is_operand(nb::handle h) {
  return is_tensor(h) || is_index(h) || is_number(h);
}

nb::object tensor_binary(OpKind kind, nb::handle a, nb::handle b, const char* what,
                         const std::string& pred = {}) {
  if (!is_operand(a) || !is_operand(b)) return not_implemented();
  SessionRef s = session_of({a, b}, what);
  Call c(s);
  Tensor x = to_tensor(c, a, what, element_of(b));
  Tensor y = to_tensor(c, b, what, element_of(a));
  return wrap(c.b->elementwise(kind, {x, y}, {}, pred), s);
}

bool is_index_operand(nb::handle h) {
  return is_index(h) || is_int(h);
}

nb::object index_binary(OpKind kind, nb::handle a, nb::handle b, const char* what) {
  if (!is_index_operand(a) || !is_index_operand(b)) return not_implemented();
  SessionRef s = session_of({a, b}, what);
  Call c(s);
  Index x = to_index(c, a, what);
  Index y = to_index(c, b, what);
  return wrap(c.b->index_op(kind, x, y, {}), s);
}

// Index comparisons make i1 scalars (conditions for if_then_else and select).
nb::object index_compare(nb::handle a, nb::handle b, const char* pred) {
  if (!is_index_operand(a) || !is_index_operand(b)) return not_implemented();
  SessionRef s = session_of({a, b}, "cmp");
  Call c(s);
  Tensor x = c.b->as_tensor(to_index(c, a, "cmp"));
  Tensor y = c.b->as_tensor(to_index(c, b, "cmp"));
  return wrap(c.b->elementwise(OpKind::cmp, {x, y}, {}, pred), s);
}

[[noreturn]] void no_truth_value(nb::handle) {
  type_error(
      "a tile value has no truth value while the kernel is built (it is known only when the "
      "kernel runs): use b.if_then_else(cond, ...) or select(cond, a, b)");
}

std::string describe(const Tensor& t) {
  const ir::Value* v = t.value();
  return "%" + v->name() + " : " + v->type().str();
}

// ---- free functions ----

// The C++ functions record their call site (a line of this file); the Call's explicit location
// replaces it, so passing Loc::current() here is only to fill the argument.
template <Tensor (*F)(const Tensor&, Loc)>
nb::object unary(nb::handle x, const char* what) {
  SessionRef s = session_of({x}, what);
  Call c(s);
  return wrap(F(to_tensor(c, x, what), Loc::current()), s);
}

nb::object min_max(bool is_max, nb::handle a, nb::handle b) {
  const char* what = is_max ? "max" : "min";
  SessionRef s = session_of({a, b}, what);
  Call c(s);
  if (is_index_operand(a) && is_index_operand(b)) {
    Index x = to_index(c, a, what), y = to_index(c, b, what);
    return wrap(is_max ? tessel::max(x, y) : tessel::min(x, y), s);
  }
  if (is_number(a)) std::swap(a, b);  // min and max commute
  Tensor x = to_tensor(c, a, what);
  if (is_number(b)) return wrap(is_max ? tessel::max(x, number(b)) : tessel::min(x, number(b)), s);
  Tensor y = to_tensor(c, b, what, x.element());
  return wrap(is_max ? tessel::max(x, y) : tessel::min(x, y), s);
}

void register_types(nb::module_& t) {
  nb::enum_<ScalarKind>(t, "ScalarKind", "Element types.")
      .value("i1", ScalarKind::i1)
      .value("i4", ScalarKind::i4)
      .value("u4", ScalarKind::u4)
      .value("i8", ScalarKind::i8)
      .value("u8", ScalarKind::u8)
      .value("i16", ScalarKind::i16)
      .value("i32", ScalarKind::i32)
      .value("i64", ScalarKind::i64)
      .value("f8e4m3", ScalarKind::f8e4m3)
      .value("f8e5m2", ScalarKind::f8e5m2)
      .value("f16", ScalarKind::f16)
      .value("bf16", ScalarKind::bf16)
      .value("f32", ScalarKind::f32)
      .value("f64", ScalarKind::f64)
      .value("index", ScalarKind::index);
  nb::enum_<MemorySpace>(t, "MemorySpace", "Memory spaces.")
      .value("Global", MemorySpace::global)
      .value("Shared", MemorySpace::shared)
      .value("Register", MemorySpace::reg);

  nb::class_<Divisibility>(t, "Divisibility", "A divisibility fact of a size: divisible_by(n).")
      .def_ro("divisor", &Divisibility::divisor);
  t.def("divisible_by", &divisible_by, "n"_a,
        "The fact `size % n == 0`: b.size('K', divisible_by(8)).");

  nb::class_<TileOptions>(t, "TileOptions", "Options of a tile view (masked(...)).")
      .def(nb::init<>())
      .def_rw("masked", &TileOptions::masked)
      .def_rw("pad", &TileOptions::pad)
      .def_rw("squeeze", &TileOptions::squeeze);
  t.def(
      "masked",
      [](double pad, std::vector<int64_t> squeeze) {
        TileOptions o = masked(pad);
        o.squeeze = std::move(squeeze);
        return o;
      },
      "pad"_a = 0.0, "squeeze"_a = std::vector<int64_t>{},
      "A masked tile: reads `pad` outside its tensor and drops writes there; `squeeze` drops "
      "dimensions of extent 1.");
}

void register_index(nb::module_& t) {
  nb::class_<PyIndex>(t, "Index",
                      "An index scalar of a tile program: a size, a block index, a loop index, "
                      "or + - * // % of them.")
      .def_prop_ro("symbol", [](const PyIndex& i) { return i.symbol; })
      .def("__add__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::add, a, b, "add"); })
      .def("__radd__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::add, b, a, "add"); })
      .def("__sub__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::sub, a, b, "sub"); })
      .def("__rsub__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::sub, b, a, "sub"); })
      .def("__mul__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::mul, a, b, "mul"); })
      .def("__rmul__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::mul, b, a, "mul"); })
      .def("__floordiv__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::div, a, b, "div"); })
      .def("__rfloordiv__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::div, b, a, "div"); })
      .def("__mod__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::rem, a, b, "rem"); })
      .def("__rmod__",
           [](nb::handle a, nb::handle b) { return index_binary(OpKind::rem, b, a, "rem"); })
      .def("__truediv__",
           [](nb::handle, nb::handle) -> nb::object {
             type_error("index division is integer division: write a // b (cdiv(a, b) rounds up)");
           })
      .def("__lt__", [](nb::handle a, nb::handle b) { return index_compare(a, b, "lt"); })
      .def("__le__", [](nb::handle a, nb::handle b) { return index_compare(a, b, "le"); })
      .def("__gt__", [](nb::handle a, nb::handle b) { return index_compare(a, b, "gt"); })
      .def("__ge__", [](nb::handle a, nb::handle b) { return index_compare(a, b, "ge"); })
      .def("__bool__", &no_truth_value)
      .def("__repr__", [](const PyIndex& i) {
        if (i.session->builder == nullptr) return std::string("<tessel.tile.Index (closed)>");
        return "<tessel.tile.Index %" + i.index.value()->name() + ">";
      });
}

void register_tensor(nb::module_& t) {
  auto binary = [](OpKind kind, const char* what, bool reflected) {
    return [kind, what, reflected](nb::handle a, nb::handle b) {
      return reflected ? tensor_binary(kind, b, a, what) : tensor_binary(kind, a, b, what);
    };
  };
  auto compare = [](const char* pred) {
    return [pred](nb::handle a, nb::handle b) {
      return tensor_binary(OpKind::cmp, a, b, "cmp", pred);
    };
  };
  nb::class_<PyTensor>(t, "Tensor",
                       "A tensor or scalar value of a tile program (a parameter, a tile, a "
                       "result). Operators + - * / and comparisons make elementwise ops.")
      .def_prop_ro("dtype",
                   [](const PyTensor& x) {
                     check_open(*x.session);
                     return x.tensor.element();
                   })
      .def_prop_ro("shape",
                   [](const PyTensor& x) {
                     check_open(*x.session);
                     nb::list shape;
                     for (const ir::Extent& e : x.tensor.type().shape()) {
                       if (e.is_static()) {
                         shape.append(e.value);
                       } else {
                         shape.append(e.symbol);
                       }
                     }
                     return shape;
                   })
      .def_prop_ro("space",
                   [](const PyTensor& x) {
                     check_open(*x.session);
                     return x.tensor.type().space();
                   })
      .def_prop_ro("type",
                   [](const PyTensor& x) {
                     check_open(*x.session);
                     return x.tensor.type().str();
                   })
      .def(
          "tile",
          [](const PyTensor& x, nb::handle shape, nb::handle coords,
             std::optional<TileOptions> options) {
            Call c(x.session);
            std::vector<int64_t> s = to_ints(shape, "tile");
            return wrap(x.tensor.tile(s, to_coords(c, coords), options.value_or(TileOptions{})),
                        x.session);
          },
          "shape"_a, "coords"_a, "options"_a = nb::none(),
          "The tile at tile coordinates `coords` (tile i covers [i*shape, (i+1)*shape)); "
          "options: masked(pad) for partial tiles.")
      .def(
          "extent",
          [](const PyTensor& x, int dim) {
            Call c(x.session);
            return wrap(x.tensor.extent(dim), x.session);
          },
          "dim"_a, "How many elements of dimension `dim` of this tile lie inside its tensor.")
      .def(
          "pin_layout",
          [](nb::handle self, const std::string& layout) {
            auto& x = nb::cast<PyTensor&>(self);
            Call c(x.session);
            x.tensor.pin_layout(layout);
            return nb::borrow(self);
          },
          "layout"_a,
          "Pins this value's layout (e.g. '((4,8),(2,2)):((32,1),(16,8))'); returns it.")
      .def(
          "pin_atom",
          [](nb::handle self, const std::string& atom) {
            auto& x = nb::cast<PyTensor&>(self);
            check_open(*x.session);
            x.tensor.pin_atom(atom);
            return nb::borrow(self);
          },
          "atom"_a, "Pins the instruction atom of the op that made this value; returns it.")
      .def(
          "name",
          [](nb::handle self, const std::string& name) {
            auto& x = nb::cast<PyTensor&>(self);
            check_open(*x.session);
            x.tensor.name(name);
            return nb::borrow(self);
          },
          "name"_a, "Names this value in the IR text; returns it.")
      .def("__add__", binary(OpKind::add, "add", false))
      .def("__radd__", binary(OpKind::add, "add", true))
      .def("__sub__", binary(OpKind::sub, "sub", false))
      .def("__rsub__", binary(OpKind::sub, "sub", true))
      .def("__mul__", binary(OpKind::mul, "mul", false))
      .def("__rmul__", binary(OpKind::mul, "mul", true))
      .def("__truediv__", binary(OpKind::div, "div", false))
      .def("__rtruediv__", binary(OpKind::div, "div", true))
      .def("__lt__", compare("lt"))
      .def("__le__", compare("le"))
      .def("__gt__", compare("gt"))
      .def("__ge__", compare("ge"))
      .def("__neg__",
           [](const PyTensor& x) {
             Call c(x.session);
             return wrap(c.b->elementwise(OpKind::neg, {x.tensor}, {}), x.session);
           })
      .def("__bool__", &no_truth_value)
      .def("__repr__", [](const PyTensor& x) {
        if (x.session->builder == nullptr) return std::string("<tessel.tile.Tensor (closed)>");
        return "<tessel.tile.Tensor " + describe(x.tensor) + ">";
      });
}

void register_functions(nb::module_& t) {
  t.def(
      "cdiv",
      [](nb::handle a, nb::handle b) {
        SessionRef s = session_of({a, b}, "cdiv");
        Call c(s);
        Index x = to_index(c, a, "cdiv"), y = to_index(c, b, "cdiv");
        return wrap(tessel::cdiv(x, y), s);
      },
      "a"_a, "b"_a, "Index division rounding up.");
  t.def(
      "min", [](nb::handle a, nb::handle b) { return min_max(false, a, b); }, "a"_a, "b"_a,
      "Elementwise minimum of tensors (a number takes the tensor's type), or of indices.");
  t.def(
      "max", [](nb::handle a, nb::handle b) { return min_max(true, a, b); }, "a"_a, "b"_a,
      "Elementwise maximum of tensors (a number takes the tensor's type), or of indices.");
  t.def(
      "exp", [](nb::handle x) { return unary<&tessel::exp>(x, "exp"); }, "x"_a);
  t.def(
      "exp2", [](nb::handle x) { return unary<&tessel::exp2>(x, "exp2"); }, "x"_a);
  t.def(
      "log", [](nb::handle x) { return unary<&tessel::log>(x, "log"); }, "x"_a);
  t.def(
      "log2", [](nb::handle x) { return unary<&tessel::log2>(x, "log2"); }, "x"_a);
  t.def(
      "sqrt", [](nb::handle x) { return unary<&tessel::sqrt>(x, "sqrt"); }, "x"_a);
  t.def(
      "rsqrt", [](nb::handle x) { return unary<&tessel::rsqrt>(x, "rsqrt"); }, "x"_a);
  t.def(
      "tanh", [](nb::handle x) { return unary<&tessel::tanh>(x, "tanh"); }, "x"_a);
  t.def(
      "sigmoid", [](nb::handle x) { return unary<&tessel::sigmoid>(x, "sigmoid"); }, "x"_a);
  t.def(
      "approx_tanh", [](nb::handle x) { return unary<&tessel::approx_tanh>(x, "approx_tanh"); },
      "x"_a);
  t.def(
      "approx_sigmoid",
      [](nb::handle x) { return unary<&tessel::approx_sigmoid>(x, "approx_sigmoid"); }, "x"_a);
  t.def(
      "abs", [](nb::handle x) { return unary<&tessel::abs>(x, "abs"); }, "x"_a);
  t.def(
      "floor", [](nb::handle x) { return unary<&tessel::floor>(x, "floor"); }, "x"_a);
  t.def(
      "transpose", [](nb::handle x) { return unary<&tessel::transpose>(x, "transpose"); }, "x"_a,
      "The transpose of a 2-D tile.");
  t.def(
      "select",
      [](nb::handle cond, nb::handle a, nb::handle b) {
        SessionRef s = session_of({cond, a, b}, "select");
        Call c(s);
        Tensor p = to_tensor(c, cond, "select");
        Tensor x = to_tensor(c, a, "select", element_of(b));
        Tensor y = to_tensor(c, b, "select", element_of(a));
        return wrap(tessel::select(p, x, y), s);
      },
      "cond"_a, "a"_a, "b"_a, "Elementwise cond ? a : b.");
  t.def(
      "fma",
      [](nb::handle a, nb::handle b, nb::handle d) {
        SessionRef s = session_of({a, b, d}, "fma");
        Call c(s);
        Tensor x = to_tensor(c, a, "fma");
        Tensor y = to_tensor(c, b, "fma", x.element());
        Tensor z = to_tensor(c, d, "fma", x.element());
        return wrap(tessel::fma(x, y, z), s);
      },
      "a"_a, "b"_a, "c"_a, "Elementwise a * b + c.");
  t.def(
      "compare",
      [](nb::handle a, nb::handle b, const std::string& pred) {
        SessionRef s = session_of({a, b}, "compare");
        Call c(s);
        Tensor x = to_tensor(c, a, "compare", element_of(b));
        Tensor y = to_tensor(c, b, "compare", element_of(a));
        return wrap(tessel::compare(x, y, pred), s);
      },
      "a"_a, "b"_a, "pred"_a, "Elementwise comparison: pred is lt, le, gt, ge, eq or ne.");
}

}  // namespace

void register_values(nb::module_& t) {
  register_types(t);
  register_index(t);
  register_tensor(t);
  register_functions(t);
}

}  // namespace tessel::python::tile_binding
