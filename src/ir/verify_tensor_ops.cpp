// The tile IR verifier's rules for the ops on tensors: tiles and views of global tensors,
// transposes, tensor creation, copies, mma, casts, rearranges, broadcasts, reductions and
// elementwise ops (the class is in verifier_internal.h).
#include "ir/verifier_internal.h"

namespace tessel::ir::detail {

void Verifier::global_view(const Operation& op) {
  counts(op, 1, 1);
  const Type& src = tensor_operand(op, 0, "the viewed tensor");
  if (src.space() != MemorySpace::global)
    error(op, "views a global tensor, not a ", to_string(src.space()), " one");
  const Type& t = op.result()->type();
  if (!t.is_tensor() || t.space() != MemorySpace::global || t.element() != src.element()) {
    error(op, "the result is a global tensor of ", to_string(src.element()));
  }
  if (!t.has_layout()) {
    error(op, "the result type carries the view's layout, e.g. global<f16, (64,8):(1,64)>[64,8]");
  }
}

void Verifier::tile(const Operation& op) {
  if (op.num_operands() < 1 || op.num_results() != 1)
    error(op, "takes a tensor and tile coordinates");
  const Type& src = tensor_operand(op, 0, "the tiled tensor");
  if (src.space() == MemorySpace::reg)
    error(op, "tiles a global or shared tensor, not a register one");
  const auto& shape = need_attr(op, "shape", Attribute::Kind::int_list, "shape = [extents]").list;
  if (static_cast<int>(shape.size()) != src.rank()) {
    error(op, "tile shape has ", shape.size(), " extent(s) but ", value_ref(op.operand(0)),
          " has rank ", src.rank());
  }
  // A window (src/ir/grouped.h) adds its first element and extent after the coordinates.
  const int window = tile_window_dim(op);
  if (op.has_attr("window") && (window < 0 || window >= src.rank())) {
    error(op, "window names dimension ", op.attr("window")->str(), ", not one of the ", src.rank(),
          " of ", value_ref(op.operand(0)));
  }
  const int extra = window >= 0 ? 2 : 0;
  // An indirect dimension (src/ir/grouped.h) adds its row map last.
  const int indirect = tile_indirect_dim(op);
  if (op.has_attr("indirect") && (indirect < 0 || indirect >= src.rank())) {
    error(op, "indirect names dimension ", op.attr("indirect")->str(), ", not one of the ",
          src.rank(), " of ", value_ref(op.operand(0)));
  }
  const int map = indirect >= 0 ? 1 : 0;
  if (op.num_operands() != 1 + src.rank() + extra + map) {
    error(op, "needs ", src.rank(), " tile coordinate(s), one per dimension",
          extra ? ", then the window's first element and extent," : ",",
          map ? " then the row map," : "", " not ", op.num_operands() - 1, " operand(s)");
  }
  if (indirect >= 0) {
    const Type& m = tensor_operand(op, op.num_operands() - 1, "the row map");
    if (m.space() != MemorySpace::global || m.element() != ScalarKind::i32 || m.rank() != 1) {
      error(op, "the row map of an indirect tile is a global<i32> of one dimension, not ",
            m.str());
    }
    if (src.space() != MemorySpace::global) error(op, "only a global tensor's tile is indirect");
    if (!op.has_attr("masked")) {
      error(op, "an indirect tile is masked: its positions end with the row map's, not with ",
            value_ref(op.operand(0)), "'s rows");
    }
    if (indirect == src.rank() - 1) {
      error(op, "indirect names the innermost dimension; only rows (an outer dimension) are "
                "scattered, each kept contiguous");
    }
    if (op.has_attr("over_read")) error(op, "an indirect tile does not over_read");
  }
  if (const Attribute* o = op.attr("over_read")) {
    if (window < 0 || !op.has_attr("masked")) {
      error(op, "over_read is only meaningful on a masked tile with a window");
    }
    // src/ir/grouped.h: a bare flag (reads past the window reach no store) or `finite` (they
    // are finite and reach a store only multiplied by zeros or discarded by a select).
    if (o->kind != Attribute::Kind::unit &&
        !(o->kind == Attribute::Kind::ident && o->s == "finite")) {
      error(op, "over_read is a bare flag or `over_read = finite`, not over_read = ", o->str());
    }
  }
  for (int i = 1; i < op.num_operands() - map; ++i) need_index(op, i);
  for (int64_t e : shape) {
    if (e <= 0) error(op, "tile extents must be positive");
  }
  std::vector<int64_t> squeeze;
  if (const Attribute* s = op.attr("squeeze")) {
    if (s->kind != Attribute::Kind::int_list) error(op, "squeeze is a list of dimensions");
    squeeze = s->list;
    for (int64_t d : squeeze) {
      if (d < 0 || d >= src.rank() || shape[d] != 1) {
        error(op, "squeeze names dimension ", d, ", which is not a tile extent of 1");
      }
      if (d == indirect) error(op, "squeezes its indirect dimension ", d);
    }
  }
  if (const Attribute* p = op.attr("pad")) {
    if (!op.has_attr("masked")) error(op, "pad is only meaningful on a masked tile");
    if (p->kind != Attribute::Kind::real && p->kind != Attribute::Kind::integer) {
      error(op, "pad is a number");
    }
  }
  Shape expect;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(squeeze.begin(), squeeze.end(), static_cast<int64_t>(d)) == squeeze.end()) {
      expect.emplace_back(shape[d]);
    }
  }
  const Type& t = op.result()->type();
  if (!t.is_tensor() || t.space() != src.space() || t.element() != src.element() ||
      t.shape() != expect) {
    error(op, "the tile of ", src.str(), " with shape ", to_string(expect), " is a ",
          to_string(src.space()), "<", to_string(src.element()), ">", to_string(expect), ", not ",
          t.str());
  }
}

void Verifier::tile_extent(const Operation& op) {
  counts(op, 1, 1);
  const Type& src = tensor_operand(op, 0, "the tile");
  int64_t dim = need_attr(op, "dim", Attribute::Kind::integer, "dim = N").i;
  if (dim < 0 || dim >= src.rank())
    error(op, "dim ", dim, " is out of range for rank ", src.rank());
  if (op.result()->type() != Type::scalar(ScalarKind::index)) error(op, "the result is an index");
}

void Verifier::transpose(const Operation& op) {
  counts(op, 1, 1);
  const Type& src = tensor_operand(op, 0, "the transposed tensor");
  std::vector<int64_t> perm;
  if (const Attribute* p = op.attr("perm")) {
    perm = p->list;
  } else if (src.rank() == 2) {
    perm = {1, 0};
  } else {
    error(op, "a tensor of rank ", src.rank(), " needs a perm attribute");
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < static_cast<int64_t>(sorted.size()); ++i) {
    if (sorted[i] != i || static_cast<int>(perm.size()) != src.rank()) {
      error(op, "perm must be a permutation of the ", src.rank(), " dimensions");
    }
  }
  Shape expect;
  for (int64_t d : perm) expect.push_back(src.shape()[d]);
  const Type& t = op.result()->type();
  if (!t.is_tensor() || t.space() != src.space() || t.element() != src.element() ||
      t.shape() != expect) {
    error(op, "transposing ", src.str(), " gives shape ", to_string(expect), ", not ", t.str());
  }
}

void Verifier::creation(const Operation& op) {
  // `alloc %tile : shared<...>`: a shared buffer whose first byte sits as far into its 128-byte
  // line as the global tile's first element does into its own (schedule-rows' rows fetched whole:
  // each warp's cp.async's then cover whole lines on both sides); the values are the same
  // without it (the interpreter ignores it).
  const bool line_of = op.kind() == OpKind::alloc && op.num_operands() == 1;
  counts(op, line_of ? 1 : 0, 1);
  const Type& t = op.result()->type();
  if (!t.is_tensor() || t.space() == MemorySpace::global) {
    error(op, "makes a register or shared tensor, not ", t.str());
  }
  if (line_of) {
    const Type& g = op.operand(0)->type();
    if (t.space() != MemorySpace::shared || !g.is_tensor() || g.space() != MemorySpace::global) {
      error(op, "with an operand places a shared buffer at the 128-byte line phase of a global "
                "tile; not a ", t.str(), " at ", g.str());
    }
  }
  if (op.kind() == OpKind::fill) {
    const Attribute* v = op.attr("value");
    if (!v || (v->kind != Attribute::Kind::real && v->kind != Attribute::Kind::integer)) {
      error(op, "needs a numeric value attribute");
    }
    if (is_float(t.element()) && v->kind != Attribute::Kind::real) {
      error(op, "a ", to_string(t.element()), " fill needs a real value such as 0.0");
    }
    if (!is_float(t.element()) && v->kind != Attribute::Kind::integer) {
      error(op, "a ", to_string(t.element()), " fill needs an integer value");
    }
  }
  if (op.kind() == OpKind::iota) {
    int64_t dim = need_attr(op, "dim", Attribute::Kind::integer, "dim = N").i;
    if (dim < 0 || dim >= t.rank()) error(op, "dim ", dim, " is out of range for rank ", t.rank());
    if (t.space() != MemorySpace::reg || !is_integer(t.element()) ||
        t.element() == ScalarKind::i1) {
      error(op, "makes a register tensor of integers, not ", t.str());
    }
  }
}

void Verifier::copy(const Operation& op) {
  if (op.num_operands() == 1 && op.num_results() == 1) {
    const Type& src = tensor_operand(op, 0, "the source");
    const Type& t = op.result()->type();
    if (!t.is_tensor()) error(op, "the result is a tensor");
    if (t.space() == MemorySpace::global) {
      error(op, "cannot make a new global tensor; copy into a tile of a global tensor instead");
    }
    same_data(op, src, t, op.operand(0), op.result());
    return;
  }
  if (op.num_operands() == 2 && op.num_results() == 0) {
    const Type& src = tensor_operand(op, 0, "the source");
    const Type& dst = tensor_operand(op, 1, "the destination");
    // src/ir/grouped.h: reads past an over_read window are unspecified, writes never are.
    for (const Value* d = op.operand(1); d->def() && d->def()->kind() == OpKind::tile;
         d = d->def()->operand(0)) {
      if (d->def()->has_attr("over_read")) {
        error(op, "writes into ", value_ref(op.operand(1)),
              ", a tile with over_read (reads past its window are unspecified; a store into a "
              "window must drop them: leave over_read off)");
      }
    }
    same_data(op, src, dst, op.operand(0), op.operand(1));
    if (dst.space() == MemorySpace::reg) {
      const Value* root = op.operand(1);
      if (!root->def() || root->def()->kind() != OpKind::alloc) {
        error(op, "the destination ", value_ref(op.operand(1)),
              " is a register value; a copy writes only into a register tensor made by alloc");
      }
    }
    return;
  }
  error(op, "is either `%dst = copy %src : TYPE` (into a new tensor) or `copy %src, %dst`");
}

void Verifier::same_data(const Operation& op, const Type& src, const Type& dst, const Value* a,
                         const Value* b) {
  if (src.space() == MemorySpace::global && dst.space() == MemorySpace::global) {
    error(op, "mismatched memory spaces: ", value_ref(a), " and ", value_ref(b),
          " are both global; stage the data through shared or register memory");
  }
  if (src.element() != dst.element()) {
    error(op, "element types differ: ", to_string(src.element()), " to ", to_string(dst.element()),
          " (use cast to convert)");
  }
  if (src.shape() != dst.shape()) {
    error(op, "shapes differ: ", value_ref(a), " is ", to_string(src.shape()), " but ",
          value_ref(b), " is ", to_string(dst.shape()));
  }
}

void Verifier::mma(const Operation& op) {
  counts(op, 3, 1);
  const Type& a = tensor_operand(op, 0, "a");
  const Type& b = tensor_operand(op, 1, "b");
  const Type& c = tensor_operand(op, 2, "c");
  for (int i = 0; i < 2; ++i) {
    const Type& t = op.operand(i)->type();
    if (t.space() == MemorySpace::global) {
      error(op, "operand ", value_ref(op.operand(i)),
            " is in global memory; mma reads shared or register tensors");
    }
  }
  if (c.space() != MemorySpace::reg)
    error(op, "the accumulator ", value_ref(op.operand(2)), " must be a register tensor");
  if (a.rank() != 2 || b.rank() != 2 || c.rank() != 2) {
    error(op, "multiplies matrices: a, b and c must have rank 2 (", a.str(), ", ", b.str(), ", ",
          c.str(), ")");
  }
  auto as = a.static_shape(), bs = b.static_shape(), cs = c.static_shape();
  if (as[1] != bs[0]) {
    error(op, "wrong shapes: a is [", as[0], ",", as[1], "] and b is [", bs[0], ",", bs[1],
          "]; the K extents differ (", as[1], " vs ", bs[0], ")");
  }
  if (cs[0] != as[0] || cs[1] != bs[1]) {
    error(op, "wrong shapes: a·b is [", as[0], ",", bs[1], "] but the accumulator is [", cs[0], ",",
          cs[1], "]");
  }
  if (a.element() != b.element()) {
    error(op, "a and b have different element types (", to_string(a.element()), ", ",
          to_string(b.element()), ")");
  }
  ScalarKind in = a.element(), acc = c.element();
  bool ok = false;
  switch (in) {
    case ScalarKind::f16:
      ok = acc == ScalarKind::f32 || acc == ScalarKind::f16;
      break;
    case ScalarKind::bf16:
    case ScalarKind::f8e4m3:
    case ScalarKind::f8e5m2:
      ok = acc == ScalarKind::f32;
      break;
    case ScalarKind::f32:
      ok = acc == ScalarKind::f32;
      break;
    case ScalarKind::f64:
      ok = acc == ScalarKind::f64;
      break;
    case ScalarKind::i8:
    case ScalarKind::u8:
      ok = acc == ScalarKind::i32;
      break;
    default:
      break;
  }
  if (!ok) {
    error(op, "no mma takes ", to_string(in), " inputs with a ", to_string(acc), " accumulator");
  }
  if (op.result()->type().with_layout({}) != c.with_layout({})) {
    error(op, "the result type ", op.result()->type().str(), " must be the accumulator's, ",
          c.str());
  }
}

void Verifier::cast(const Operation& op) {
  counts(op, 1, 1);
  const Type& src = op.operand(0)->type();
  const Type& t = op.result()->type();
  if (src.is_tensor() != t.is_tensor())
    error(op, "casts a scalar to a scalar or a tensor to a tensor");
  if (src.is_tensor()) {
    if (src.space() != MemorySpace::reg || t.space() != MemorySpace::reg) {
      error(op, "casts register tensors; ", value_ref(op.operand(0)), " is ", src.str());
    }
    if (src.shape() != t.shape())
      error(op, "keeps the shape: ", to_string(src.shape()), " vs ", to_string(t.shape()));
  }
}

void Verifier::rearrange(const Operation& op) {
  counts(op, 1, 1);
  const Type& src = tensor_operand(op, 0, "the rearranged tensor");
  if (src.space() != MemorySpace::reg)
    error(op, "redistributes a register tensor, not ", src.str());
  if (op.result()->type().with_layout({}) != src.with_layout({})) {
    error(op, "keeps element type and shape: ", src.str(), " vs ", op.result()->type().str());
  }
  if (const Attribute* l = op.attr("layout"); l && l->kind != Attribute::Kind::layout) {
    error(op, "layout is a layout<...>");
  }
}

void Verifier::broadcast(const Operation& op) {
  counts(op, 1, 1);
  const Type& src = op.operand(0)->type();
  const Type& t = op.result()->type();
  if (!t.is_tensor() || t.space() != MemorySpace::reg) error(op, "makes a register tensor");
  if (src.is_tensor() && src.space() != MemorySpace::reg)
    error(op, "broadcasts a register tensor or a scalar");
  if (src.element() != t.element()) error(op, "keeps the element type");
  const auto& dims = need_attr(op, "dims", Attribute::Kind::int_list, "the new dimensions").list;
  if (static_cast<int>(dims.size()) + (src.is_tensor() ? src.rank() : 0) != t.rank()) {
    error(op, "adds ", dims.size(), " dimension(s) to rank ", src.is_tensor() ? src.rank() : 0,
          " but the result has rank ", t.rank());
  }
  std::set<int64_t> unique(dims.begin(), dims.end());
  for (int64_t d : dims) {
    if (d < 0 || d >= t.rank() || unique.size() != dims.size()) {
      error(op, "dims lists distinct new dimensions of the result (rank ", t.rank(), ")");
    }
  }
  int k = 0;
  for (int d = 0; d < t.rank(); ++d) {
    if (unique.count(d)) continue;
    if (src.shape()[k] != t.shape()[d]) {
      error(op, "dimension ", d, " of the result is ", t.shape()[d].str(), " but the source's is ",
            src.shape()[k].str());
    }
    ++k;
  }
}

void Verifier::reduce(const Operation& op) {
  counts(op, 1, 1);
  const Type& src = tensor_operand(op, 0, "the reduced tensor");
  if (src.space() != MemorySpace::reg) error(op, "reduces a register tensor, not ", src.str());
  const std::string& kind = need_attr(op, "kind", Attribute::Kind::ident, "sum, max or min").s;
  if (kind != "sum" && kind != "max" && kind != "min")
    error(op, "kind is sum, max or min, not ", kind);
  auto dims = need_attr(op, "dims", Attribute::Kind::int_list, "the reduced dimensions").list;
  std::set<int64_t> unique(dims.begin(), dims.end());
  if (unique.size() != dims.size() || dims.empty()) error(op, "dims lists distinct dimensions");
  Shape rest;
  for (int d = 0; d < src.rank(); ++d) {
    if (!unique.count(d)) rest.push_back(src.shape()[d]);
  }
  for (int64_t d : dims) {
    if (d < 0 || d >= src.rank())
      error(op, "dimension ", d, " is out of range for rank ", src.rank());
  }
  Type expect = rest.empty() ? Type::scalar(src.element())
                             : Type::tensor(src.element(), rest, MemorySpace::reg);
  if (op.result()->type().with_layout({}) != expect) {
    error(op, "reducing ", src.str(), " over ", Attribute::ints(dims).str(), " gives ",
          expect.str(), ", not ", op.result()->type().str());
  }
}

void Verifier::elementwise(const Operation& op) {
  int arity = op_info(op.kind()).arity;
  counts(op, arity, 1);
  no_regions(op);
  const Type* shape_from = nullptr;
  for (int i = 0; i < arity; ++i) {
    const Type& t = op.operand(i)->type();
    if (t.is_tensor()) {
      if (t.space() != MemorySpace::reg) {
        error(op, "operand ", value_ref(op.operand(i)), " is a ", to_string(t.space()),
              " tensor; elementwise ops read register tensors and scalars (copy it first)");
      }
      if (shape_from && shape_from->shape() != t.shape()) {
        error(op, "operand shapes differ: ", to_string(shape_from->shape()), " vs ",
              to_string(t.shape()));
      }
      shape_from = &t;
    }
  }
  int first_data = op.kind() == OpKind::select ? 1 : 0;
  if (op.kind() == OpKind::select && op.operand(0)->type().element() != ScalarKind::i1) {
    error(op, "the condition ", value_ref(op.operand(0)), " must be i1");
  }
  ScalarKind element = op.operand(first_data)->type().element();
  for (int i = first_data; i < arity; ++i) {
    if (op.operand(i)->type().element() != element) {
      error(op, "element types differ: ", value_ref(op.operand(first_data)), " is ",
            to_string(element), " but ", value_ref(op.operand(i)), " is ",
            to_string(op.operand(i)->type().element()));
    }
  }
  // `approx` (tanh and sigmoid): the hardware's tanh approximation on the GPU (tanh.approx.f32,
  // one MUFU.TANH; sigmoid(x) as 0.5 tanh(x / 2) + 0.5), for epilogues whose outputs are 16-bit
  // anyway. The interpreter computes the exact function.
  if (op.has_attr("approx")) {
    if (op.kind() != OpKind::tanh && op.kind() != OpKind::sigmoid)
      error(op, "`approx` is for tanh and sigmoid (the hardware's tanh approximation)");
    if (op.attr("approx")->kind != Attribute::Kind::unit) error(op, "`approx` is a unit attribute");
  }
  // `accurate` (exp): expf's sequence whatever exp-to-exp2 finds (src/transforms/algebra).
  if (op.has_attr("accurate")) {
    if (op.kind() != OpKind::exp) error(op, "`accurate` is for exp (kept from exp-to-exp2)");
    if (op.attr("accurate")->kind != Attribute::Kind::unit)
      error(op, "`accurate` is a unit attribute");
  }
  switch (op.kind()) {
    case OpKind::exp:
    case OpKind::exp2:
    case OpKind::log:
    case OpKind::log2:
    case OpKind::sqrt:
    case OpKind::rsqrt:
    case OpKind::tanh:
    case OpKind::sigmoid:
    case OpKind::floor:
    case OpKind::fma:
      if (!is_float(element)) error(op, "needs floating-point operands, not ", to_string(element));
      break;
    case OpKind::cdiv:
      if (!is_integer(element)) error(op, "needs integer operands, not ", to_string(element));
      break;
    case OpKind::cmp: {
      const std::string& pred =
          need_attr(op, "pred", Attribute::Kind::ident, "lt, le, gt, ge, eq or ne").s;
      static const std::set<std::string> preds = {"lt", "le", "gt", "ge", "eq", "ne"};
      if (!preds.count(pred)) error(op, "pred is lt, le, gt, ge, eq or ne, not ", pred);
      break;
    }
    default:
      break;
  }
  ScalarKind out = op.kind() == OpKind::cmp ? ScalarKind::i1 : element;
  Type expect =
      shape_from ? Type::tensor(out, shape_from->shape(), MemorySpace::reg) : Type::scalar(out);
  if (op.result()->type().with_layout({}) != expect) {
    error(op, "the result is ", expect.str(), ", not ", op.result()->type().str());
  }
}

}  // namespace tessel::ir::detail
