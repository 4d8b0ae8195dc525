// The tile IR verifier.
#include "ir/verifier.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "ir/async.h"
#include "ir/layout_text.h"

namespace tessel::ir {
namespace {

class Verifier {
 public:
  void kernel(const Operation& op) {
    kernel_ = &op;
    const KernelSignature& sig = op.signature();
    if (sig.name.empty()) error(op, "a kernel needs a name");
    std::set<std::string> sizes;
    for (const std::string& s : sig.sizes) {
      if (!sizes.insert(s).second) error(op, "size ", s, " is declared twice");
    }
    sizes_ = sizes;
    for (const Fact& fact : sig.facts) {
      if (!sizes.count(fact.symbol)) {
        error(op, "the fact ", fact.symbol, " % ", fact.divisor, " == 0 names an undeclared size");
      }
      if (fact.divisor <= 0)
        error(op, "the divisor of a fact must be positive, not ", fact.divisor);
    }
    if (op.regions().size() != 1) error(op, "a kernel has exactly one region");
    const Block& body = *op.region(0);
    for (const auto& arg : body.arguments()) {
      const Type& t = arg->type();
      if (t.is_tensor() && t.space() != MemorySpace::global) {
        error(op, "parameter ", value_ref(arg.get()), " is a ", to_string(t.space()),
              " tensor; kernel parameters are global tensors or scalars");
      }
      check_type(op, t);
    }
    scopes_.emplace_back();
    for (const auto& arg : body.arguments()) scopes_.back().insert(arg.get());
    block(body);
    scopes_.pop_back();
    verify_roles(op);
  }

 private:
  template <typename... Parts>
  [[noreturn]] void error(const Operation& op, Parts&&... parts) {
    user_error(op.loc(), op.name(), ": ", std::forward<Parts>(parts)...);
  }

  bool visible(const Value* v) const {
    for (const auto& scope : scopes_) {
      if (scope.count(v)) return true;
    }
    return false;
  }

  void check_type(const Operation& op, const Type& t) {
    if (!t.is_tensor()) return;
    for (const Extent& e : t.shape()) {
      if (!e.is_static() && !sizes_.count(e.symbol)) {
        error(op, "type ", t.str(), " uses size ", e.symbol, ", which the kernel does not declare");
      }
      if (e.is_static() && e.value <= 0) error(op, "type ", t.str(), " has an empty extent");
    }
    if (t.space() != MemorySpace::global && !is_static(t.shape())) {
      error(op, "a ", to_string(t.space()), " tensor needs a static shape, not ",
            to_string(t.shape()));
    }
    std::string problem = check_tensor_layout(t);
    if (!problem.empty()) error(op, problem);
  }

  void block(const Block& b) {
    for (size_t i = 0; i < b.ops().size(); ++i) {
      const Operation& op = *b.ops()[i];
      if (op.kind() == OpKind::yield && i + 1 != b.ops().size()) {
        error(op, "yield must be the last op of its region");
      }
      operation(op);
      for (const auto& r : op.results()) scopes_.back().insert(r.get());
    }
  }

  void operation(const Operation& op) {
    for (int i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (v == nullptr) error(op, "operand ", i, " is missing");
      if (!visible(v)) {
        error(op, "operand ", i, " (", value_ref(v),
              ") does not dominate this use: it is not defined "
              "earlier in this region or an enclosing one");
      }
    }
    for (const auto& r : op.results()) check_type(op, r->type());
    check_reads(op);
    if (is_elementwise(op.kind())) return elementwise(op);
    if (is_async_op(op.kind())) {
      verify_async_op(op);
      if (op.kind() == OpKind::warp_group) {
        region(op, *op.region(0), [](const Operation&) {});
      }
      return;
    }
    switch (op.kind()) {
      case OpKind::kernel:
        error(op, "a kernel cannot be nested in another op");
      case OpKind::size:
        return size_op(op);
      case OpKind::slice: {
        counts(op, 1, 1);
        const Type& src = tensor_operand(op, 0, "the sliced tensor");
        const Type& t = op.result()->type();
        if (src.space() != MemorySpace::reg || !t.is_tensor() || t.space() != MemorySpace::reg ||
            t.element() != src.element()) {
          error(op, "takes a static part of a register tensor into a register tensor of the same "
                    "element type");
        }
        const auto& offsets = need_attr(op, "offsets", Attribute::Kind::int_list, "a list").list;
        const auto& shape = need_attr(op, "shape", Attribute::Kind::int_list, "a list").list;
        if (static_cast<int>(offsets.size()) != src.rank() ||
            static_cast<int>(shape.size()) != src.rank()) {
          error(op, "needs one offset and one extent per dimension of ", src.str());
        }
        std::vector<int64_t> whole = src.static_shape();
        for (int d = 0; d < src.rank(); ++d) {
          if (offsets[d] < 0 || shape[d] <= 0 || offsets[d] + shape[d] > whole[d]) {
            error(op, "part [", offsets[d], ", ", offsets[d] + shape[d], ") of dimension ", d,
                  " lies outside ", src.str());
          }
          if (!(t.shape()[d] == Extent(shape[d]))) {
            error(op, "the result's shape ", to_string(t.shape()), " is not the part's");
          }
        }
        return;
      }
      case OpKind::sm_count:
      case OpKind::cluster_rank:
        if (op.num_operands() != 0 || op.num_results() != 1 ||
            op.result()->type() != Type::scalar(ScalarKind::index)) {
          error(op, "takes nothing and makes one index: `%n = ", op.name(), " : index`");
        }
        if (!op.parent_op() || op.parent_op()->kind() != OpKind::kernel) {
          error(op, "stands at the top level of the kernel");
        }
        return;
      case OpKind::constant:
        return constant(op);
      case OpKind::block_grid:
        return block_grid(op);
      case OpKind::global_view:
        return global_view(op);
      case OpKind::tile:
        return tile(op);
      case OpKind::tile_extent:
        return tile_extent(op);
      case OpKind::transpose:
        return transpose(op);
      case OpKind::alloc:
      case OpKind::fill:
      case OpKind::iota:
        return creation(op);
      case OpKind::copy:
        return copy(op);
      case OpKind::mma:
        return mma(op);
      case OpKind::cast:
        return cast(op);
      case OpKind::rearrange:
        return rearrange(op);
      case OpKind::broadcast:
        return broadcast(op);
      case OpKind::reduce:
        return reduce(op);
      case OpKind::for_:
        return for_op(op);
      case OpKind::if_:
        return if_op(op);
      case OpKind::yield:
        return yield(op);
      case OpKind::call_external:
        if (!op.attr("callee") || op.attr("callee")->kind != Attribute::Kind::string) {
          error(op, "needs a callee = \"name\" attribute");
        }
        return;
      default:
        error(op, "no verifier rule for this op");
    }
  }

  void counts(const Operation& op, int operands, int results) {
    if (op.num_operands() != operands) {
      error(op, "takes ", operands, " operand(s), not ", op.num_operands());
    }
    if (op.num_results() != results)
      error(op, "has ", results, " result(s), not ", op.num_results());
  }

  void no_regions(const Operation& op) {
    if (!op.regions().empty()) error(op, "has no regions");
  }

  const Attribute& need_attr(const Operation& op, const std::string& key, Attribute::Kind kind,
                             std::string_view what) {
    const Attribute* a = op.attr(key);
    if (!a || a->kind != kind) error(op, "needs a ", key, " attribute (", what, ")");
    return *a;
  }

  void need_index(const Operation& op, int i) {
    const Type& t = op.operand(i)->type();
    if (t != Type::scalar(ScalarKind::index)) {
      error(op, "operand ", i, " (", value_ref(op.operand(i)), ") must be an index, not ", t.str());
    }
  }

  const Type& tensor_operand(const Operation& op, int i, std::string_view role) {
    const Type& t = op.operand(i)->type();
    if (!t.is_tensor())
      error(op, role, " ", value_ref(op.operand(i)), " must be a tensor, not ", t.str());
    return t;
  }

  void size_op(const Operation& op) {
    counts(op, 0, 1);
    const Attribute& name = need_attr(op, "name", Attribute::Kind::ident, "name = SYMBOL");
    if (!sizes_.count(name.s)) error(op, "size ", name.s, " is not declared by the kernel");
    if (op.result()->type() != Type::scalar(ScalarKind::index)) error(op, "the result is an index");
  }

  void constant(const Operation& op) {
    counts(op, 0, 1);
    const Type& t = op.result()->type();
    if (!t.is_scalar()) error(op, "makes a scalar; use fill for a tensor");
    const Attribute* v = op.attr("value");
    if (!v) error(op, "needs a value attribute");
    if (is_float(t.element())) {
      if (v->kind != Attribute::Kind::real)
        error(op, "a ", t.str(), " constant needs a real value such as 1.0");
    } else if (v->kind != Attribute::Kind::integer) {
      error(op, "a ", t.str(), " constant needs an integer value");
    } else if (t.element() != ScalarKind::index && bit_width(t.element()) < 64) {
      int bits = bit_width(t.element());
      int64_t lo = is_signed(t.element()) ? -(int64_t{1} << (bits - 1)) : 0;
      int64_t hi =
          is_signed(t.element()) ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
      if (v->i < lo || v->i > hi) error(op, "value ", v->i, " does not fit in ", t.str());
    }
  }

  void block_grid(const Operation& op) {
    if (op.num_operands() < 1 || op.num_operands() > 3) error(op, "takes 1 to 3 grid extents");
    if (op.num_results() != op.num_operands()) {
      error(op, "gives one block index per grid extent: ", op.num_operands(), " extent(s) but ",
            op.num_results(), " result(s)");
    }
    if (op.parent_op() != kernel_) error(op, "must be in the kernel's top-level region");
    if (seen_grid_) error(op, "a kernel declares its grid once");
    seen_grid_ = true;
    if (const Attribute* c = op.attr("cluster");
        c && !(c->kind == Attribute::Kind::ident && c->s == "auto")) {
      // Blocks per cluster along each grid dimension (async.h, "Clusters"), or `auto`
      // (cluster-blocks decides).
      if (c->kind != Attribute::Kind::int_list || static_cast<int>(c->list.size()) != op.num_operands()) {
        error(op, "`cluster` lists the blocks per cluster along each of its ", op.num_operands(),
              " grid dimension(s), as [2, 1], or is auto");
      }
      int64_t blocks = 1;
      for (int64_t e : c->list) {
        if (e < 1) error(op, "`cluster` extents are positive");
        blocks *= e;
      }
      if (blocks > 8) error(op, "a cluster of ", blocks, " blocks is over the portable limit of 8");
    }
    for (int i = 0; i < op.num_operands(); ++i) {
      need_index(op, i);
      if (!grid_invariant(op.operand(i))) {
        error(op, "grid extent ", value_ref(op.operand(i)),
              " must be computed from sizes and constants only");
      }
      if (op.result(i)->type() != Type::scalar(ScalarKind::index))
        error(op, "block indices are index");
    }
  }

  static bool grid_invariant(const Value* v) {
    const Operation* def = v->def();
    if (!def) return false;
    if (def->kind() == OpKind::size || def->kind() == OpKind::constant ||
        def->kind() == OpKind::sm_count)
      return true;
    if (!is_elementwise(def->kind())) return false;
    return std::all_of(def->operands().begin(), def->operands().end(), grid_invariant);
  }

  void global_view(const Operation& op) {
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

  void tile(const Operation& op) {
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
    if (op.num_operands() != 1 + src.rank()) {
      error(op, "needs ", src.rank(), " tile coordinate(s), one per dimension, not ",
            op.num_operands() - 1);
    }
    for (int i = 1; i < op.num_operands(); ++i) need_index(op, i);
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

  void tile_extent(const Operation& op) {
    counts(op, 1, 1);
    const Type& src = tensor_operand(op, 0, "the tile");
    int64_t dim = need_attr(op, "dim", Attribute::Kind::integer, "dim = N").i;
    if (dim < 0 || dim >= src.rank())
      error(op, "dim ", dim, " is out of range for rank ", src.rank());
    if (op.result()->type() != Type::scalar(ScalarKind::index)) error(op, "the result is an index");
  }

  void transpose(const Operation& op) {
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

  void creation(const Operation& op) {
    counts(op, 0, 1);
    const Type& t = op.result()->type();
    if (!t.is_tensor() || t.space() == MemorySpace::global) {
      error(op, "makes a register or shared tensor, not ", t.str());
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
      if (dim < 0 || dim >= t.rank())
        error(op, "dim ", dim, " is out of range for rank ", t.rank());
      if (t.space() != MemorySpace::reg || !is_integer(t.element()) ||
          t.element() == ScalarKind::i1) {
        error(op, "makes a register tensor of integers, not ", t.str());
      }
    }
  }

  void copy(const Operation& op) {
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

  void same_data(const Operation& op, const Type& src, const Type& dst, const Value* a,
                 const Value* b) {
    if (src.space() == MemorySpace::global && dst.space() == MemorySpace::global) {
      error(op, "mismatched memory spaces: ", value_ref(a), " and ", value_ref(b),
            " are both global; stage the data through shared or register memory");
    }
    if (src.element() != dst.element()) {
      error(op, "element types differ: ", to_string(src.element()), " to ",
            to_string(dst.element()), " (use cast to convert)");
    }
    if (src.shape() != dst.shape()) {
      error(op, "shapes differ: ", value_ref(a), " is ", to_string(src.shape()), " but ",
            value_ref(b), " is ", to_string(dst.shape()));
    }
  }

  void mma(const Operation& op) {
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
      error(op, "wrong shapes: a·b is [", as[0], ",", bs[1], "] but the accumulator is [", cs[0],
            ",", cs[1], "]");
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

  void cast(const Operation& op) {
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

  void rearrange(const Operation& op) {
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

  void broadcast(const Operation& op) {
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
        error(op, "dimension ", d, " of the result is ", t.shape()[d].str(),
              " but the source's is ", src.shape()[k].str());
      }
      ++k;
    }
  }

  void reduce(const Operation& op) {
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

  void elementwise(const Operation& op) {
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
        if (!is_float(element))
          error(op, "needs floating-point operands, not ", to_string(element));
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

  void for_op(const Operation& op) {
    if (op.num_operands() < 3) error(op, "needs a lower bound, an upper bound and a step");
    for (int i = 0; i < 3; ++i) need_index(op, i);
    int carried = op.num_operands() - 3;
    if (op.num_results() != carried) {
      error(op, "has ", carried, " loop-carried value(s) but ", op.num_results(), " result(s)");
    }
    if (op.regions().size() != 1) error(op, "has one region");
    const Block& body = *op.region(0);
    if (static_cast<int>(body.arguments().size()) != 1 + carried) {
      error(op, "the body takes the loop index and ", carried, " loop-carried value(s)");
    }
    if (body.argument(0)->type() != Type::scalar(ScalarKind::index))
      error(op, "the loop index is an index");
    for (int i = 0; i < carried; ++i) {
      const Type& init = op.operand(3 + i)->type();
      if (body.argument(1 + i)->type() != init || op.result(i)->type() != init) {
        error(op, "loop-carried value ", value_ref(body.argument(1 + i)), " is ", init.str(),
              " on entry but ", body.argument(1 + i)->type().str(), " in the body and ",
              op.result(i)->type().str(), " as a result");
      }
    }
    region(op, body, [&](const Operation& yield_op) {
      if (yield_op.num_operands() != carried) {
        error(yield_op, "the loop body yields ", yield_op.num_operands(),
              " value(s) but the loop carries ", carried);
      }
      for (int i = 0; i < carried; ++i) {
        const Type& init = op.operand(3 + i)->type();
        const Type& got = yield_op.operand(i)->type();
        if (got != init) {
          error(yield_op, "loop-carried type change: ", value_ref(body.argument(1 + i)),
                " enters the loop as ", init.str(), " but the body yields ", got.str());
        }
      }
    });
  }

  void if_op(const Operation& op) {
    counts(op, 1, op.num_results());
    if (op.operand(0)->type() != Type::scalar(ScalarKind::i1)) {
      error(op, "the condition ", value_ref(op.operand(0)), " must be an i1 scalar, not ",
            op.operand(0)->type().str());
    }
    if (op.regions().size() != 2) error(op, "has a then region and an else region");
    for (int r = 0; r < 2; ++r) {
      const Block& b = *op.region(r);
      if (!b.arguments().empty()) error(op, "its regions take no arguments");
      if (op.num_results() > 0 && b.ops().empty()) {
        error(op, "yields ", op.num_results(), " value(s), so the ", r ? "else" : "then",
              " region must yield them");
      }
      region(op, b, [&](const Operation& yield_op) {
        if (yield_op.num_operands() != op.num_results()) {
          error(yield_op, "the ", r ? "else" : "then", " region yields ", yield_op.num_operands(),
                " value(s) but the if has ", op.num_results(), " result(s)");
        }
        for (int i = 0; i < op.num_results(); ++i) {
          if (yield_op.operand(i)->type() != op.result(i)->type()) {
            error(yield_op, "yields ", yield_op.operand(i)->type().str(), " for result ", i,
                  " of type ", op.result(i)->type().str());
          }
        }
      });
    }
  }

  template <typename CheckYield>
  void region(const Operation& op, const Block& body, CheckYield check_yield) {
    scopes_.emplace_back();
    for (const auto& arg : body.arguments()) scopes_.back().insert(arg.get());
    auto saved_written = written_;
    block(body);
    const Operation* term = body.terminator();
    if (term) {
      check_yield(*term);
    } else if (op.num_results() > 0 || (op.kind() == OpKind::for_ && op.num_operands() > 3)) {
      error(op, "its region must end with a yield");
    }
    // Writes in a region count afterwards too: the error is a read that no write can precede.
    for (const Value* v : written_) saved_written.insert(v);
    written_ = saved_written;
    scopes_.pop_back();
  }

  void yield(const Operation& op) {
    const Operation* parent = op.parent_op();
    if (!parent || (parent->kind() != OpKind::for_ && parent->kind() != OpKind::if_)) {
      error(op, "yield ends the region of a for or an if");
    }
    if (op.num_results() != 0) error(op, "has no results");
  }

  // An alloc'd tensor must be written (by a copy into it or into a view of it) before anything
  // reads it: reading it earlier reads undefined data.
  static const Value* storage_root(const Value* v) {
    while (v->def() &&
           (v->def()->kind() == OpKind::tile || v->def()->kind() == OpKind::transpose)) {
      v = v->def()->operand(0);
    }
    return v;
  }

  void check_reads(const Operation& op) {
    bool is_store = op.kind() == OpKind::copy && op.num_operands() == 2;
    bool is_view = op.kind() == OpKind::tile || op.kind() == OpKind::transpose ||
                   op.kind() == OpKind::tile_extent;
    for (int i = 0; i < op.num_operands(); ++i) {
      if (is_view || (is_store && i == 1)) continue;
      const Value* root = storage_root(op.operand(i));
      if (root->def() && root->def()->kind() == OpKind::alloc && !written_.count(root)) {
        error(op, to_string(root->type().space()), " tensor ", value_ref(root),
              " is read before it is written (alloc makes it uninitialized)");
      }
    }
    if (is_store) written_.insert(storage_root(op.operand(1)));
  }

  const Operation* kernel_ = nullptr;
  bool seen_grid_ = false;
  std::set<std::string> sizes_;
  std::vector<std::unordered_set<const Value*>> scopes_;
  std::unordered_set<const Value*> written_;
};

}  // namespace

void verify_kernel(const Operation& kernel) {
  if (kernel.kind() != OpKind::kernel)
    user_error(kernel.loc(), kernel.name(), ": expected a kernel");
  Verifier().kernel(kernel);
}

void verify(const Module& module) {
  std::set<std::string> names;
  for (const auto& kernel : module.kernels) {
    if (!names.insert(kernel->signature().name).second) {
      user_error(kernel->loc(), "kernel: two kernels are named @", kernel->signature().name);
    }
    verify_kernel(*kernel);
  }
}

}  // namespace tessel::ir
