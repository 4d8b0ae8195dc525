// The C++ tile language: each call appends one op of tile IR, with light type inference; the
// verifier checks the whole kernel at the end and reports at the C++ call site.
#include "tessel/tile.h"

#include <algorithm>

#include "ir/layout_text.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace tessel {

using ir::Attribute;
using ir::OpKind;
using ir::Type;

namespace {

SourceLocation at(const Loc& loc) {
  return SourceLocation::from(loc);
}

const Type kIndex = Type::scalar(ScalarKind::index);

TileBuilder& builder_of(const Tensor& a, const Tensor& b) {
  TileBuilder* builder = a.builder() ? a.builder() : b.builder();
  TESSEL_ASSERT(builder, "a tile-language value without a builder (default-constructed?)");
  return *builder;
}

// The result type of an elementwise op: register tensor of the tensor operands' shape, or scalar.
Type elementwise_type(OpKind kind, const std::vector<Tensor>& operands) {
  ScalarKind element = operands.at(kind == OpKind::select ? 1 : 0).element();
  if (kind == OpKind::cmp) element = ScalarKind::i1;
  for (const Tensor& t : operands) {
    if (t.type().is_tensor()) return Type::tensor(element, t.type().shape(), MemorySpace::reg);
  }
  return Type::scalar(element);
}

}  // namespace

std::string TileKernel::text() const {
  return ir::print(*module_);
}

TileKernel tile_kernel(const std::string& name, const std::function<void(TileBuilder&)>& body,
                       Loc loc) {
  return tile_kernel(name, body, at(loc));
}

TileKernel tile_kernel(const std::string& name, const std::function<void(TileBuilder&)>& body,
                       const SourceLocation& loc) {
  auto module = std::make_unique<ir::Module>();
  auto op = std::make_unique<ir::Operation>(OpKind::kernel, loc);
  op->signature().name = name;
  op->add_region();
  ir::Operation* kernel = op.get();
  module->kernels.push_back(std::move(op));
  TileBuilder builder(kernel, Loc::current());  // the constructor does not use its location
  body(builder);
  ir::verify(*module);
  return TileKernel(std::move(module));
}

TileBuilder::TileBuilder(ir::Operation* kernel, Loc) : kernel_(kernel), ops_(kernel->region(0)) {}

SourceLocation TileBuilder::where(const Loc& loc) const {
  return location_ ? *location_ : at(loc);
}

// Every op goes through here, so an explicit location (set_location) reaches all of them, also
// those the free functions and operators make from their recorded call sites.
ir::Operation* TileBuilder::create(OpKind kind, const std::vector<ir::Value*>& operands,
                                   const std::vector<Type>& types, const SourceLocation& loc) {
  const SourceLocation& here = location_ ? *location_ : loc;
  for (ir::Value* v : operands) {
    if (v == nullptr)
      user_error(here, ir::op_name(kind), ": an operand is an empty (default) value");
  }
  return ops_.create(kind, operands, types, here);
}

// ---- parameters ----

Size TileBuilder::size(const std::string& symbol, Divisibility fact, Loc loc) {
  ir::KernelSignature& sig = kernel_->signature();
  if (std::find(sig.sizes.begin(), sig.sizes.end(), symbol) != sig.sizes.end()) {
    user_error(where(loc), "size: ", symbol, " is declared twice");
  }
  if (fact.divisor <= 0)
    user_error(where(loc), "size: divisible_by(", fact.divisor, ") must be positive");
  sig.sizes.push_back(symbol);
  if (fact.divisor > 1) sig.facts.push_back({symbol, fact.divisor});
  ir::Operation* op = create(OpKind::size, {}, {kIndex}, at(loc));
  op->set_attr("name", Attribute::ident(symbol));
  op->result()->set_name(symbol);
  return Size(this, op->result(), symbol);
}

Tensor TileBuilder::global(const std::string& name, ScalarKind element,
                           const std::vector<Dim>& shape, Loc) {
  ir::Shape s;
  for (const Dim& d : shape) s.push_back(d.extent);
  ir::Value* arg =
      kernel_->region(0)->add_argument(Type::tensor(element, s, MemorySpace::global), name);
  return Tensor(this, arg);
}

Tensor TileBuilder::scalar(const std::string& name, ScalarKind element, Loc) {
  return Tensor(this, kernel_->region(0)->add_argument(Type::scalar(element), name));
}

void TileBuilder::ready(const Tensor& parameter, Loc loc) {
  const ir::Value* v = parameter.value();
  if (!v || v->def() || v->owner_block() != kernel_->region(0) || !v->type().is_tensor()) {
    user_error(where(loc), "ready: ", v ? ir::value_ref(v) : std::string("an empty value"),
               " is not a global tensor parameter of the kernel");
  }
  std::vector<int>& ready = kernel_->signature().ready;
  if (std::find(ready.begin(), ready.end(), v->index()) == ready.end())
    ready.push_back(v->index());
}

// ---- grid and indices ----

std::vector<Index> TileBuilder::grid(const std::vector<Index>& extents, Loc loc) {
  std::vector<ir::Value*> operands;
  std::vector<Type> types;
  for (const Index& e : extents) {
    operands.push_back(e.value());
    types.push_back(kIndex);
  }
  ir::Operation* op = create(OpKind::block_grid, operands, types, at(loc));
  static const char* kNames[] = {"bx", "by", "bz"};
  std::vector<Index> out;
  for (int i = 0; i < op->num_results(); ++i) {
    if (i < 3) op->result(i)->set_name(kNames[i]);
    out.emplace_back(this, op->result(i));
  }
  return out;
}

std::vector<Index> TileBuilder::grid(const std::vector<Index>& extents, const GridOrder& order,
                                     Loc loc) {
  return order_grid(grid(extents, loc), extents, order, loc);
}

std::vector<Index> TileBuilder::order_grid(const std::vector<Index>& ids,
                                           const std::vector<Index>& extents,
                                           const GridOrder& order, Loc loc) {
  const int dims = static_cast<int>(ids.size());
  ir::Operation* grid = ids.empty() || !ids[0].value() ? nullptr : ids[0].value()->def();
  if (!grid || grid->kind() != OpKind::block_grid || extents.size() != ids.size())
    user_error(where(loc), "block_grid order: the indices are not those of a block_grid of as ",
               "many extents (order_grid takes what grid() returned and its extents)");
  if (order.raster_group < 0)
    user_error(where(loc), "block_grid order: raster_group must be at least 1 (0 leaves it to "
               "tessel), not ", order.raster_group);
  if (order.raster_group > 0 && dims != 2)
    user_error(where(loc), "block_grid order: raster groups order a 2-D grid, not one of ", dims,
               dims == 1 ? " dimension" : " dimensions");
  if (order.alternate_ends < -1 || order.alternate_ends >= dims)
    user_error(where(loc), "block_grid order: alternate_ends names dimension ",
               order.alternate_ends, ", but the grid has ", dims,
               dims == 1 ? " dimension" : " dimensions");
  if (order.raster_group > 0)
    grid->set_attr("raster_group", Attribute::integer(order.raster_group));
  std::vector<Index> out = ids;
  if (order.alternate_ends >= 0)
    out[order.alternate_ends] = alternate_ends(ids[order.alternate_ends],
                                               extents[order.alternate_ends], loc);
  return out;
}

std::array<Index, 1> TileBuilder::block_grid(GridExtent x) {
  auto v = grid({x.index}, x.loc);
  return {v[0]};
}

std::array<Index, 2> TileBuilder::block_grid(GridExtent x, const Index& y) {
  auto v = grid({x.index, y}, x.loc);
  return {v[0], v[1]};
}

std::array<Index, 3> TileBuilder::block_grid(GridExtent x, const Index& y, const Index& z) {
  auto v = grid({x.index, y, z}, x.loc);
  return {v[0], v[1], v[2]};
}

Index TileBuilder::index(int64_t value, Loc loc) {
  ir::Operation* op = create(OpKind::constant, {}, {kIndex}, at(loc));
  op->set_attr("value", Attribute::integer(value));
  op->result()->set_name("c" + std::to_string(value < 0 ? -value : value) +
                         (value < 0 ? "_neg" : ""));
  return Index(this, op->result());
}

Index TileBuilder::index_op(OpKind kind, const Index& a, const Index& b, SourceLocation loc) {
  ir::Operation* op = create(kind, {a.value(), b.value()}, {kIndex}, std::move(loc));
  op->result()->set_name(std::string(ir::op_name(kind)));
  return Index(this, op->result());
}

Tensor TileBuilder::splat(double value, ScalarKind element, SourceLocation loc) {
  ir::Operation* op = create(OpKind::constant, {}, {Type::scalar(element)}, loc);
  op->set_attr("value", ir::is_float(element) ? Attribute::real(value)
                                              : Attribute::integer(static_cast<int64_t>(value)));
  op->result()->set_name("cst");
  return Tensor(this, op->result());
}

// ---- tensors ----

Tensor Tensor::tile(const std::vector<int64_t>& shape, const std::vector<Coord>& coords,
                    const TileOptions& options, Loc loc) const {
  TileBuilder& b = *b_;
  std::vector<ir::Value*> operands = {v_};
  for (const Coord& c : coords) {
    operands.push_back(c.is_constant ? b.index(c.constant, loc).value() : c.index.value());
  }
  ir::Shape result;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(options.squeeze.begin(), options.squeeze.end(), static_cast<int64_t>(d)) ==
        options.squeeze.end()) {
      result.emplace_back(shape[d]);
    }
  }
  ir::Operation* op =
      b.create(OpKind::tile, operands, {Type::tensor(element(), result, type().space())}, at(loc));
  op->set_attr("shape", Attribute::ints(shape));
  if (options.masked) {
    op->set_attr("masked", Attribute::unit());
    op->set_attr("pad", Attribute::real(options.pad));
  }
  if (!options.squeeze.empty()) op->set_attr("squeeze", Attribute::ints(options.squeeze));
  op->result()->set_name(v_->name() + "_tile");
  return Tensor(b_, op->result());
}

Index Tensor::extent(int dim, Loc loc) const {
  ir::Operation* op = b_->create(OpKind::tile_extent, {v_}, {kIndex}, at(loc));
  op->set_attr("dim", Attribute::integer(dim));
  op->result()->set_name(v_->name() + "_extent" + std::to_string(dim));
  return Index(b_, op->result());
}

Tensor& Tensor::pin_layout(const std::string& layout, Loc loc) {
  TESSEL_ASSERT(v_, "pin_layout on an empty value");
  SourceLocation here = b_->where(loc);
  if (!type().is_tensor()) user_error(here, "pin_layout: ", v_->name(), " is a scalar");
  v_->set_type(type().with_layout(ir::canonical_layout(layout, here)));
  std::string problem = ir::check_tensor_layout(type());
  if (!problem.empty()) user_error(here, "pin_layout: ", problem);
  return *this;
}

Tensor& Tensor::pin_atom(const std::string& atom) {
  TESSEL_ASSERT(v_ && v_->def(), "pin_atom on a value that no op made");
  v_->def()->set_attr("atom", Attribute::string(atom));
  return *this;
}

Tensor& Tensor::name(const std::string& name) {
  v_->set_name(name);
  return *this;
}

Tensor TileBuilder::fill(ScalarKind element, const std::vector<int64_t>& shape, double value,
                         MemorySpace space, Loc loc) {
  ir::Shape s(shape.begin(), shape.end());
  ir::Operation* op = create(OpKind::fill, {}, {Type::tensor(element, s, space)}, at(loc));
  op->set_attr("value", ir::is_float(element) ? Attribute::real(value)
                                              : Attribute::integer(static_cast<int64_t>(value)));
  op->result()->set_name("fill");
  return Tensor(this, op->result());
}

Tensor TileBuilder::alloc(ScalarKind element, const std::vector<int64_t>& shape, MemorySpace space,
                          Loc loc) {
  ir::Shape s(shape.begin(), shape.end());
  ir::Operation* op = create(OpKind::alloc, {}, {Type::tensor(element, s, space)}, at(loc));
  op->result()->set_name(space == MemorySpace::shared ? "smem" : "regs");
  return Tensor(this, op->result());
}

Tensor TileBuilder::iota(ScalarKind element, const std::vector<int64_t>& shape, int dim, Loc loc) {
  ir::Shape s(shape.begin(), shape.end());
  ir::Operation* op =
      create(OpKind::iota, {}, {Type::tensor(element, s, MemorySpace::reg)}, at(loc));
  op->set_attr("dim", Attribute::integer(dim));
  op->result()->set_name("iota");
  return Tensor(this, op->result());
}

Tensor TileBuilder::constant(double value, ScalarKind element, Loc loc) {
  return splat(value, element, at(loc));
}

Tensor TileBuilder::copy(const Tensor& src, MemorySpace space, Loc loc) {
  const Type& t = src.type();
  Type result = t.is_tensor() ? Type::tensor(t.element(), t.shape(), space) : t;
  ir::Operation* op = create(OpKind::copy, {src.value()}, {result}, at(loc));
  std::string base = src.value()->name();
  if (auto pos = base.find("_tile"); pos != std::string::npos) base = base.substr(0, pos);
  op->result()->set_name((space == MemorySpace::shared ? "s" : "r") + base);
  return Tensor(this, op->result());
}

void TileBuilder::copy(const Tensor& src, const Tensor& dst, Loc loc) {
  create(OpKind::copy, {src.value(), dst.value()}, {}, at(loc));
}

Tensor TileBuilder::mma(const Tensor& a, const Tensor& b, const Tensor& c, Loc loc) {
  ir::Operation* op = create(OpKind::mma, {a.value(), b.value(), c.value()}, {c.type()}, at(loc));
  op->result()->set_name("acc");
  return Tensor(this, op->result());
}

Tensor TileBuilder::cast(const Tensor& x, ScalarKind element, Loc loc) {
  const Type& t = x.type();
  Type result = t.is_tensor() ? Type::tensor(element, t.shape(), t.space()) : Type::scalar(element);
  ir::Operation* op = create(OpKind::cast, {x.value()}, {result}, at(loc));
  op->result()->set_name(x.value()->name() + "_" + std::string(ir::to_string(element)));
  return Tensor(this, op->result());
}

Tensor TileBuilder::rearrange(const Tensor& x, const std::string& layout, Loc loc) {
  ir::Operation* op = create(OpKind::rearrange, {x.value()}, {x.type().with_layout({})}, at(loc));
  if (!layout.empty())
    op->set_attr("layout", Attribute::layout(ir::canonical_layout(layout, where(loc))));
  op->result()->set_name(x.value()->name() + "_r");
  return Tensor(this, op->result());
}

Tensor TileBuilder::broadcast(const Tensor& x, const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& new_dims, Loc loc) {
  ir::Shape s(shape.begin(), shape.end());
  ir::Operation* op = create(OpKind::broadcast, {x.value()},
                             {Type::tensor(x.element(), s, MemorySpace::reg)}, at(loc));
  op->set_attr("dims", Attribute::ints(new_dims));
  op->result()->set_name(x.value()->name() + "_b");
  return Tensor(this, op->result());
}

namespace {
Tensor reduce(TileBuilder& b, const Tensor& x, const char* kind, const std::vector<int64_t>& dims,
              Loc loc) {
  const Type& t = x.type();
  ir::Shape rest;
  if (t.is_tensor()) {
    for (int d = 0; d < t.rank(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) rest.push_back(t.shape()[d]);
    }
  }
  Type result =
      rest.empty() ? Type::scalar(x.element()) : Type::tensor(x.element(), rest, MemorySpace::reg);
  ir::Operation* op = b.create(OpKind::reduce, {x.value()}, {result}, at(loc));
  op->set_attr("kind", Attribute::ident(kind));
  op->set_attr("dims", Attribute::ints(dims));
  op->result()->set_name(std::string(kind));
  return Tensor(&b, op->result());
}
}  // namespace

Tensor TileBuilder::reduce_sum(const Tensor& x, const std::vector<int64_t>& dims, Loc loc) {
  return reduce(*this, x, "sum", dims, loc);
}
Tensor TileBuilder::reduce_max(const Tensor& x, const std::vector<int64_t>& dims, Loc loc) {
  return reduce(*this, x, "max", dims, loc);
}
Tensor TileBuilder::reduce_min(const Tensor& x, const std::vector<int64_t>& dims, Loc loc) {
  return reduce(*this, x, "min", dims, loc);
}

Tensor TileBuilder::transpose(const Tensor& x, Loc loc) {
  const Type& t = x.type();
  ir::Shape s = t.shape();
  if (s.size() == 2) std::swap(s[0], s[1]);
  ir::Operation* op =
      create(OpKind::transpose, {x.value()}, {t.with_shape(s).with_layout({})}, at(loc));
  op->result()->set_name(x.value()->name() + "_t");
  return Tensor(this, op->result());
}

Tensor TileBuilder::global_view(const Tensor& x, const std::string& layout,
                                const std::vector<Dim>& shape, Loc loc) {
  ir::Shape s;
  for (const Dim& d : shape) s.push_back(d.extent);
  Type t =
      Type::tensor(x.element(), s, MemorySpace::global, ir::canonical_layout(layout, where(loc)));
  ir::Operation* op = create(OpKind::global_view, {x.value()}, {t}, at(loc));
  op->result()->set_name(x.value()->name() + "_view");
  return Tensor(this, op->result());
}

// ---- control ----

std::vector<Tensor> TileBuilder::loop(
    const Index& lo, const Index& hi, const Index& step, const std::vector<Tensor>& init,
    const std::function<std::vector<Tensor>(Index, std::vector<Tensor>)>& body, Loc loc) {
  std::vector<ir::Value*> operands = {lo.value(), hi.value(), step.value()};
  std::vector<Type> types;
  for (const Tensor& t : init) {
    operands.push_back(t.value());
    types.push_back(t.type());
  }
  ir::Operation* op = create(OpKind::for_, operands, types, at(loc));
  ir::Block* block = op->add_region();
  Index k(this, block->add_argument(kIndex, "k"));
  std::vector<Tensor> carried;
  for (size_t i = 0; i < init.size(); ++i) {
    carried.emplace_back(this,
                         block->add_argument(init[i].type(), init[i].value()->name() + "_it"));
  }
  ir::Block* outer = ops_.block();
  ops_.set_block(block);
  std::vector<Tensor> next = body(k, carried);
  std::vector<ir::Value*> yielded;
  for (const Tensor& t : next) yielded.push_back(t.value());
  create(OpKind::yield, yielded, {}, at(loc));
  ops_.set_block(outer);
  std::vector<Tensor> out;
  for (int i = 0; i < op->num_results(); ++i) {
    op->result(i)->set_name(init[i].value()->name() + "_out");
    out.emplace_back(this, op->result(i));
  }
  return out;
}

std::vector<Tensor> TileBuilder::loop(
    const Index& count, const std::vector<Tensor>& init,
    const std::function<std::vector<Tensor>(Index, std::vector<Tensor>)>& body, Loc loc) {
  return loop(index(0, loc), count, index(1, loc), init, body, loc);
}

Tensor TileBuilder::loop(const Index& count, const Tensor& init,
                         const std::function<Tensor(Index, Tensor)>& body, Loc loc) {
  auto out = loop(
      count, std::vector<Tensor>{init},
      [&](Index k, std::vector<Tensor> carried) {
        return std::vector<Tensor>{body(k, carried[0])};
      },
      loc);
  return out[0];
}

std::vector<Tensor> TileBuilder::if_then_else(const Tensor& cond,
                                              const std::function<std::vector<Tensor>()>& then_body,
                                              const std::function<std::vector<Tensor>()>& else_body,
                                              Loc loc) {
  ir::Operation* op = create(OpKind::if_, {cond.value()}, {}, at(loc));
  ir::Block* outer = ops_.block();
  std::vector<Type> types;
  for (int r = 0; r < 2; ++r) {
    ir::Block* block = op->add_region();
    ops_.set_block(block);
    std::vector<Tensor> values =
        r == 0 ? then_body() : (else_body ? else_body() : std::vector<Tensor>{});
    std::vector<ir::Value*> yielded;
    for (const Tensor& t : values) yielded.push_back(t.value());
    if (r == 0) {
      for (const Tensor& t : values) types.push_back(t.type());
    }
    if (!yielded.empty() || r == 0 || !block->ops().empty())
      create(OpKind::yield, yielded, {}, at(loc));
  }
  ops_.set_block(outer);
  std::vector<Tensor> out;
  for (const Type& t : types) out.emplace_back(this, op->add_result(t, "sel"));
  return out;
}

std::vector<Tensor> TileBuilder::call_external(const std::string& callee,
                                               const std::vector<Tensor>& args,
                                               const std::vector<Type>& results, Loc loc) {
  std::vector<ir::Value*> operands;
  for (const Tensor& t : args) operands.push_back(t.value());
  ir::Operation* op = create(OpKind::call_external, operands, results, at(loc));
  op->set_attr("callee", Attribute::string(callee));
  std::vector<Tensor> out;
  for (int i = 0; i < op->num_results(); ++i) {
    op->result(i)->set_name(callee);
    out.emplace_back(this, op->result(i));
  }
  return out;
}

Tensor TileBuilder::elementwise(OpKind kind, const std::vector<Tensor>& operands,
                                SourceLocation loc, const std::string& pred) {
  std::vector<ir::Value*> values;
  for (const Tensor& t : operands) values.push_back(t.value());
  ir::Operation* op = create(kind, values, {elementwise_type(kind, operands)}, std::move(loc));
  if (!pred.empty()) op->set_attr("pred", Attribute::ident(pred));
  op->result()->set_name(std::string(ir::op_name(kind)));
  return Tensor(this, op->result());
}

// ---- index arithmetic ----

namespace {
Index index_binary(OpKind kind, const Index& a, const Index& b, SourceLocation loc = {}) {
  TileBuilder* builder = a.builder() ? a.builder() : b.builder();
  TESSEL_ASSERT(builder, "index arithmetic on empty indices");
  return builder->index_op(kind, a, b, std::move(loc));
}
Index index_binary(OpKind kind, const Index& a, int64_t b, SourceLocation loc = {}) {
  TESSEL_ASSERT(a.builder(), "index arithmetic on an empty index");
  return index_binary(kind, a, a.builder()->index(b), std::move(loc));
}
}  // namespace

Index operator+(const Index& a, const IndexOperand& b) {
  return index_binary(OpKind::add, a, b.index, at(b.loc));
}
Index operator-(const Index& a, const IndexOperand& b) {
  return index_binary(OpKind::sub, a, b.index, at(b.loc));
}
Index operator*(const Index& a, const IndexOperand& b) {
  return index_binary(OpKind::mul, a, b.index, at(b.loc));
}
Index operator/(const Index& a, const IndexOperand& b) {
  return index_binary(OpKind::div, a, b.index, at(b.loc));
}
Index operator%(const Index& a, const IndexOperand& b) {
  return index_binary(OpKind::rem, a, b.index, at(b.loc));
}
Index operator+(const Index& a, const IntOperand& b) {
  return index_binary(OpKind::add, a, b.value, at(b.loc));
}
Index operator-(const Index& a, const IntOperand& b) {
  return index_binary(OpKind::sub, a, b.value, at(b.loc));
}
Index operator*(const Index& a, const IntOperand& b) {
  return index_binary(OpKind::mul, a, b.value, at(b.loc));
}
Index operator/(const Index& a, const IntOperand& b) {
  return index_binary(OpKind::div, a, b.value, at(b.loc));
}
Index operator%(const Index& a, const IntOperand& b) {
  return index_binary(OpKind::rem, a, b.value, at(b.loc));
}
Index cdiv(const Index& a, const Index& b, Loc loc) {
  return index_binary(OpKind::cdiv, a, b, at(loc));
}
Index cdiv(const Index& a, int64_t b, Loc loc) {
  return index_binary(OpKind::cdiv, a, b, at(loc));
}
Index min(const Index& a, const Index& b, Loc loc) {
  return index_binary(OpKind::min, a, b, at(loc));
}
Index alternate_ends(const Index& k, const Index& n, Loc loc) {
  // Integer arithmetic only: the emitter and the interpreter have it, and no branch diverges.
  TileBuilder& b = *k.builder();
  auto named = [](Index i, const char* name) {
    i.value()->set_name(name);
    return i;
  };
  Index one = b.index(1, loc), two = b.index(2, loc);
  Index half = named(k / IndexOperand(two, loc), "half");
  Index odd = named(k % IndexOperand(two, loc), "odd");
  Index even = named(one - IndexOperand(odd, loc), "even");
  Index last = named(n - IndexOperand(one, loc), "last");
  Index from_end = named(last - IndexOperand(half, loc), "from_end");
  Index light = named(odd * IndexOperand(half, loc), "light_part");
  Index heavy = named(even * IndexOperand(from_end, loc), "heavy_part");
  return named(light + IndexOperand(heavy, loc), "alternated");
}

Index max(const Index& a, const Index& b, Loc loc) {
  return index_binary(OpKind::max, a, b, at(loc));
}

// ---- elementwise ----

namespace {
Tensor binary(OpKind kind, const Tensor& a, const Tensor& b, SourceLocation loc = {},
              const std::string& pred = {}) {
  return builder_of(a, b).elementwise(kind, {a, b}, std::move(loc), pred);
}
Tensor binary(OpKind kind, const Tensor& a, double b, SourceLocation loc = {}) {
  TileBuilder& builder = builder_of(a, a);
  return builder.elementwise(kind, {a, builder.splat(b, a.element(), loc)}, loc);
}
Tensor unary(OpKind kind, const Tensor& x, const Loc& loc) {
  return builder_of(x, x).elementwise(kind, {x}, at(loc));
}
}  // namespace

Tensor operator+(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::add, a, b.tensor, at(b.loc));
}
Tensor operator-(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::sub, a, b.tensor, at(b.loc));
}
Tensor operator*(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::mul, a, b.tensor, at(b.loc));
}
Tensor operator/(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::div, a, b.tensor, at(b.loc));
}
Tensor operator-(const Tensor& a) {
  return builder_of(a, a).elementwise(OpKind::neg, {a}, {});
}
Tensor operator+(const Tensor& a, const NumberOperand& b) {
  return binary(OpKind::add, a, b.value, at(b.loc));
}
Tensor operator-(const Tensor& a, const NumberOperand& b) {
  return binary(OpKind::sub, a, b.value, at(b.loc));
}
Tensor operator*(const Tensor& a, const NumberOperand& b) {
  return binary(OpKind::mul, a, b.value, at(b.loc));
}
Tensor operator/(const Tensor& a, const NumberOperand& b) {
  return binary(OpKind::div, a, b.value, at(b.loc));
}
Tensor operator<(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::cmp, a, b.tensor, at(b.loc), "lt");
}
Tensor operator<=(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::cmp, a, b.tensor, at(b.loc), "le");
}
Tensor operator>(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::cmp, a, b.tensor, at(b.loc), "gt");
}
Tensor operator>=(const Tensor& a, const TensorOperand& b) {
  return binary(OpKind::cmp, a, b.tensor, at(b.loc), "ge");
}
Tensor exp(const Tensor& x, Loc loc) {
  return unary(OpKind::exp, x, loc);
}
Tensor exp2(const Tensor& x, Loc loc) {
  return unary(OpKind::exp2, x, loc);
}
Tensor log(const Tensor& x, Loc loc) {
  return unary(OpKind::log, x, loc);
}
Tensor log2(const Tensor& x, Loc loc) {
  return unary(OpKind::log2, x, loc);
}
Tensor sqrt(const Tensor& x, Loc loc) {
  return unary(OpKind::sqrt, x, loc);
}
Tensor rsqrt(const Tensor& x, Loc loc) {
  return unary(OpKind::rsqrt, x, loc);
}
Tensor tanh(const Tensor& x, Loc loc) {
  return unary(OpKind::tanh, x, loc);
}
Tensor sigmoid(const Tensor& x, Loc loc) {
  return unary(OpKind::sigmoid, x, loc);
}
Tensor approx_tanh(const Tensor& x, Loc loc) {
  Tensor t = unary(OpKind::tanh, x, loc);
  t.value()->def()->set_attr("approx", Attribute::unit());
  return t;
}
Tensor approx_sigmoid(const Tensor& x, Loc loc) {
  Tensor t = unary(OpKind::sigmoid, x, loc);
  t.value()->def()->set_attr("approx", Attribute::unit());
  return t;
}
Tensor abs(const Tensor& x, Loc loc) {
  return unary(OpKind::abs, x, loc);
}
Tensor floor(const Tensor& x, Loc loc) {
  return unary(OpKind::floor, x, loc);
}
Tensor max(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::max, a, b, at(loc));
}
Tensor min(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::min, a, b, at(loc));
}
Tensor max(const Tensor& a, double b, Loc loc) {
  return binary(OpKind::max, a, b, at(loc));
}
Tensor min(const Tensor& a, double b, Loc loc) {
  return binary(OpKind::min, a, b, at(loc));
}
Tensor select(const Tensor& cond, const Tensor& a, const Tensor& b, Loc loc) {
  return builder_of(a, b).elementwise(OpKind::select, {cond, a, b}, at(loc));
}
Tensor fma(const Tensor& a, const Tensor& b, const Tensor& c, Loc loc) {
  return builder_of(a, b).elementwise(OpKind::fma, {a, b, c}, at(loc));
}
Tensor compare(const Tensor& a, const Tensor& b, const std::string& pred, Loc loc) {
  return binary(OpKind::cmp, a, b, at(loc), pred);
}
Tensor transpose(const Tensor& x, Loc loc) {
  return builder_of(x, x).transpose(x, loc);
}

}  // namespace tessel
