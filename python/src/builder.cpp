#include "builder.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "caller.h"
#include "kernel.h"
#include "tessel/tile.h"
#include "tile_values.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessel::python {
namespace {

using namespace tile_binding;

struct PyBuilder {
  SessionRef session;
};

// ---- the kernel ----

// A verifier error located in a file that exists (the user's script): show its line and a caret,
// as errors in tile IR text do.
UserError with_file_excerpt(const UserError& error) {
  std::ifstream in(error.location().file);
  if (!in) return error;
  std::stringstream text;
  text << in.rdbuf();
  return with_source_excerpt(error, text.str());
}

nb::object build(const std::string& name, nb::callable body, const std::string& file, int line) {
  SourceLocation where = file.empty() ? python_caller() : SourceLocation::at(file, line, 0);
  auto session = std::make_shared<Session>();
  session->kernel = name;
  std::optional<TileKernel> built;
  try {
    built = tile_kernel(
        name,
        [&](TileBuilder& b) {
          session->builder = &b;
          struct Close {
            Session& s;
            ~Close() { s.builder = nullptr; }
          } close{*session};
          body(PyBuilder{session});
        },
        where);
  } catch (const UserError& error) {
    throw with_file_excerpt(error);
  }
  // The Kernel shares the TileKernel's module (an aliasing shared_ptr keeps the TileKernel).
  auto kernel = std::make_shared<TileKernel>(std::move(*built));
  std::shared_ptr<ir::Module> module(kernel, &kernel->module());
  return nb::cast(Kernel(module, &kernel->op()));
}

// ---- builder methods with a Python shape ----

nb::object loop(PyBuilder& self, nb::args args) {
  if (args.size() != 3 && args.size() != 5) {
    type_error("loop(count, init, body) or loop(lo, hi, step, init, body)");
  }
  Call c(self.session);
  const SessionRef& s = self.session;
  nb::handle init = args[args.size() - 2];
  if (!PyCallable_Check(args[args.size() - 1].ptr())) {
    type_error("loop: the body must be a function, got " + python_type(args[args.size() - 1]));
  }
  nb::callable body = nb::borrow<nb::callable>(args[args.size() - 1]);
  bool single = is_tensor(init) || is_index(init);
  std::vector<Tensor> carried_init;
  if (single) {
    carried_init.push_back(to_tensor(c, init, "loop"));
  } else if (!init.is_none()) {
    carried_init = body_values(c, init, "loop");
  }
  bool none = carried_init.empty();
  auto run = [&](Index k, std::vector<Tensor> carried) {
    return run_body(c, "loop", [&]() -> nb::object {
      nb::object index = wrap(k, s);
      if (none) return body(index);
      if (single) return body(index, wrap(carried.at(0), s));
      return body(index, wrap_all(carried, s));
    });
  };
  std::vector<Tensor> out;
  if (args.size() == 3) {
    Index count = to_index(c, args[0], "loop");
    out = c.b->loop(count, carried_init, run);
  } else {
    Index lo = to_index(c, args[0], "loop"), hi = to_index(c, args[1], "loop"),
          step = to_index(c, args[2], "loop");
    out = c.b->loop(lo, hi, step, carried_init, run);
  }
  if (none) return nb::none();
  if (single) return wrap(out.at(0), s);
  return wrap_all(out, s);
}

nb::object if_then_else(PyBuilder& self, nb::handle cond, nb::callable then_body,
                        std::optional<nb::callable> else_body) {
  Call c(self.session);
  const SessionRef& s = self.session;
  Tensor condition = to_tensor(c, cond, "if_then_else");
  enum class Shape { none, one, many } shape = Shape::none;
  auto then_run = [&] {
    return run_body(c, "if_then_else", [&]() -> nb::object {
      nb::object r = then_body();
      shape = r.is_none() ? Shape::none : (is_tensor(r) || is_index(r)) ? Shape::one : Shape::many;
      return r;
    });
  };
  std::function<std::vector<Tensor>()> else_run;
  if (else_body) {
    else_run = [&] { return run_body(c, "if_then_else", [&] { return (*else_body)(); }); };
  }
  std::vector<Tensor> out = c.b->if_then_else(condition, then_run, else_run);
  if (shape == Shape::none) return nb::none();
  if (shape == Shape::one && out.size() == 1) return wrap(out[0], s);
  return wrap_all(out, s);
}

using Reduction = Tensor (TileBuilder::*)(const Tensor&, const std::vector<int64_t>&, Loc);

template <Reduction R>
nb::object reduce(PyBuilder& self, nb::handle x, nb::handle dims, const char* what) {
  Call c(self.session);
  Tensor t = to_tensor(c, x, what);
  return wrap((c.b->*R)(t, to_ints(dims, what), Loc::current()), self.session);
}

void register_builder_class(nb::module_& t) {
  nb::class_<PyBuilder>(t, "Builder",
                        "The builder a kernel's body gets (the C++ TileBuilder): parameters, "
                        "the grid, tensors, control flow.")
      .def(
          "size",
          [](PyBuilder& self, const std::string& symbol, std::optional<Divisibility> fact) {
            Call c(self.session);
            Size size = c.b->size(symbol, fact.value_or(Divisibility{}));
            return nb::cast(PyIndex{size, size.symbol(), self.session});
          },
          "symbol"_a, "fact"_a = nb::none(),
          "A kernel size (an index, and a symbol for shapes): size('K', divisible_by(8)).")
      .def(
          "global_",
          [](PyBuilder& self, const std::string& name, nb::handle element, nb::handle shape) {
            Call c(self.session);
            return wrap(c.b->global(name, to_element(element), to_dims(c, shape, "global_")),
                        self.session);
          },
          "name"_a, "element"_a, "shape"_a,
          "A tensor parameter in global memory: global_('A', f16, [M, K]) (the C++ `global`).")
      .def(
          "scalar",
          [](PyBuilder& self, const std::string& name, nb::handle element) {
            Call c(self.session);
            return wrap(c.b->scalar(name, to_element(element)), self.session);
          },
          "name"_a, "element"_a, "A scalar parameter: scalar('eps', f32).")
      .def(
          "ready",
          [](PyBuilder& self, nb::handle parameter) {
            Call c(self.session);
            c.b->ready(to_tensor(c, parameter, "ready"));
          },
          "parameter"_a,
          "Declares a global tensor parameter ready (ready(%W) in the signature): no launch that "
          "may still run writes it (weights), so an overlapping launch may read it before the "
          "launch before it has finished.")
      .def(
          "block_grid",
          [](PyBuilder& self, nb::args extents) {
            Call c(self.session);
            std::vector<Index> e;
            for (nb::handle h : extents) e.push_back(to_index(c, h, "block_grid"));
            nb::list out;
            for (const Index& i : c.b->grid(e)) out.append(wrap(i, self.session));
            return nb::tuple(out);
          },
          "The grid (one to three extents); returns this block's indices as a tuple.")
      .def(
          "index",
          [](PyBuilder& self, int64_t value) {
            Call c(self.session);
            return wrap(c.b->index(value), self.session);
          },
          "value"_a, "An index constant.")
      .def(
          "as_tensor",
          [](PyBuilder& self, nb::handle i) {
            Call c(self.session);
            return wrap(c.b->as_tensor(to_index(c, i, "as_tensor")), self.session);
          },
          "index"_a, "An index as a scalar tensor value (to cast it, or compute with it).")
      .def(
          "fill",
          [](PyBuilder& self, nb::handle element, nb::handle shape, double value,
             nb::handle space) {
            Call c(self.session);
            return wrap(
                c.b->fill(to_element(element), to_ints(shape, "fill"), value, to_space(space)),
                self.session);
          },
          "element"_a, "shape"_a, "value"_a, "space"_a = nb::none(),
          "A tensor filled with `value` (registers unless `space` says otherwise).")
      .def(
          "alloc",
          [](PyBuilder& self, nb::handle element, nb::handle shape, nb::handle space) {
            Call c(self.session);
            return wrap(c.b->alloc(to_element(element), to_ints(shape, "alloc"), to_space(space)),
                        self.session);
          },
          "element"_a, "shape"_a, "space"_a, "An uninitialized tensor in `space`, to copy into.")
      .def(
          "iota",
          [](PyBuilder& self, nb::handle element, nb::handle shape, int dim) {
            Call c(self.session);
            return wrap(c.b->iota(to_element(element), to_ints(shape, "iota"), dim), self.session);
          },
          "element"_a, "shape"_a, "dim"_a, "Each element's coordinate along `dim`.")
      .def(
          "constant",
          [](PyBuilder& self, double value, nb::handle element) {
            Call c(self.session);
            return wrap(c.b->constant(value, to_element(element)), self.session);
          },
          "value"_a, "element"_a, "A scalar constant.")
      .def(
          "copy",
          [](PyBuilder& self, nb::handle src, nb::handle to) -> nb::object {
            Call c(self.session);
            Tensor s = to_tensor(c, src, "copy");
            if (is_tensor(to)) {
              c.b->copy(s, to_tensor(c, to, "copy"));
              return nb::none();
            }
            return wrap(c.b->copy(s, to_space(to)), self.session);
          },
          "src"_a, "to"_a = nb::none(),
          "copy(src, space=Register): a copy in a new tensor; copy(src, dst): writes src into "
          "dst (a tile of a global tensor, or an alloc).")
      .def(
          "mma",
          [](PyBuilder& self, nb::handle a, nb::handle b, nb::handle acc) {
            Call c(self.session);
            return wrap(
                c.b->mma(to_tensor(c, a, "mma"), to_tensor(c, b, "mma"), to_tensor(c, acc, "mma")),
                self.session);
          },
          "a"_a, "b"_a, "c"_a, "c + a·b with a: [M,K], b: [K,N], c: [M,N]; the new accumulator.")
      .def(
          "cast",
          [](PyBuilder& self, nb::handle x, nb::handle element) {
            Call c(self.session);
            return wrap(c.b->cast(to_tensor(c, x, "cast"), to_element(element)), self.session);
          },
          "x"_a, "element"_a, "x converted to another element type.")
      .def(
          "rearrange",
          [](PyBuilder& self, nb::handle x, const std::string& layout) {
            Call c(self.session);
            return wrap(c.b->rearrange(to_tensor(c, x, "rearrange"), layout), self.session);
          },
          "x"_a, "layout"_a = "", "x in another layout (the given one, or one tessel picks).")
      .def(
          "broadcast",
          [](PyBuilder& self, nb::handle x, nb::handle shape, nb::handle new_dims) {
            Call c(self.session);
            return wrap(c.b->broadcast(to_tensor(c, x, "broadcast"), to_ints(shape, "broadcast"),
                                       to_ints(new_dims, "broadcast")),
                        self.session);
          },
          "x"_a, "shape"_a, "new_dims"_a,
          "x with dimensions added at positions `new_dims` so that it fills `shape`.")
      .def(
          "reduce_sum",
          [](PyBuilder& self, nb::handle x, nb::handle dims) {
            return reduce<&TileBuilder::reduce_sum>(self, x, dims, "reduce_sum");
          },
          "x"_a, "dims"_a)
      .def(
          "reduce_max",
          [](PyBuilder& self, nb::handle x, nb::handle dims) {
            return reduce<&TileBuilder::reduce_max>(self, x, dims, "reduce_max");
          },
          "x"_a, "dims"_a)
      .def(
          "reduce_min",
          [](PyBuilder& self, nb::handle x, nb::handle dims) {
            return reduce<&TileBuilder::reduce_min>(self, x, dims, "reduce_min");
          },
          "x"_a, "dims"_a)
      .def(
          "transpose",
          [](PyBuilder& self, nb::handle x) {
            Call c(self.session);
            return wrap(c.b->transpose(to_tensor(c, x, "transpose")), self.session);
          },
          "x"_a)
      .def(
          "global_view",
          [](PyBuilder& self, nb::handle x, const std::string& layout, nb::handle shape) {
            Call c(self.session);
            return wrap(c.b->global_view(to_tensor(c, x, "global_view"), layout,
                                         to_dims(c, shape, "global_view")),
                        self.session);
          },
          "x"_a, "layout"_a, "shape"_a,
          "The global tensor x seen through `layout` (coordinates of `shape` -> offsets).")
      .def("loop", &loop,
           "loop(count, init, body) or loop(lo, hi, step, init, body): for k in range, carried "
           "= body(k, carried). init is a Tensor (body(k, x) returns one), a list (body(k, xs) "
           "returns a list), or None (body(k)). Returns the final carried values.")
      .def("if_then_else", &if_then_else, "cond"_a, "then_body"_a, "else_body"_a = nb::none(),
           "if cond: then_body() else: else_body(); both return the same values (None, a Tensor "
           "or a list), which this returns.");
}

}  // namespace

void register_builder(nb::module_& m) {
  nb::module_ t = m.def_submodule("tile", "The tile language (see tessel/tile.py).");
  register_values(t);
  register_builder_class(t);
  t.def("build", &build, "name"_a, "body"_a, "file"_a = "", "line"_a = 0,
        "Builds and verifies the kernel `name` by calling body(builder); a tessel.Kernel. "
        "file/line: where the kernel is defined (default: the caller).");
  m.def("_set_package_dir", &set_package_dir, "dir"_a,
        "The tessel package's folder, whose frames are skipped when locating builder calls.");
}

}  // namespace tessel::python
